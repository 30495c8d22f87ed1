"""Regression tests for defects 5, 6, 7, 8 and 10 of the reliability issue (third probe), and
for its note on what a run stopped by a terminal event returns.  Each test failed on the commit
before its fix; the expected values are independent: SciPy's own ``nfev``, closed-form and exact
torque-free solutions (`rotode.exact.free_rigid_body`), SciPy's event location.
"""
import warnings

import numpy as np
import pytest
import scipy.integrate

import rotode
from rotode import events as ev
from rotode import so3
from rotode.exact import free_rigid_body

TOP = rotode.RigidBody([1.0, 1.0, 0.5], torque=rotode.torque.Gravity(1.0, 1.0, [0, 0, 1]))
Y_TOP = np.array([1.0, 0, 0, 0, 0.5, 0, 0.3])


def _angle(q1, q2):
    """Angle (rad) of the rotation between two quaternions (any length, either sign)."""
    q1 = np.asarray(q1, float) / np.linalg.norm(q1)
    q2 = np.asarray(q2, float) / np.linalg.norm(q2)
    d = rotode.quaternion.multiply(rotode.quaternion.conjugate(q1), q2)
    return 2.0 * np.arctan2(np.linalg.norm(d[1:]), abs(d[0]))


# ---- 5: nfev of DOP853 with t_eval at t0 / tf, as SciPy counts it ---------------------------

BODY = rotode.RigidBody([1.0, 2.0, 3.0])
Y_BODY = np.array([1.0, 0, 0, 0, 0.3, 1.0, -0.5])


def _t_eval(kind, t0, tf):
    inner = np.linspace(t0, tf, 12)[1:-1]
    return {"none": None, "t0": np.r_[t0, inner], "tf": np.r_[inner, tf],
            "both": np.r_[t0, inner, tf], "inner": inner, "ends": np.array([t0, tf]),
            "t0 alone": np.array([t0]), "tf alone": np.array([tf])}[kind]


@pytest.mark.parametrize("span", [(0.0, 5.0), (5.0, 0.0), (2.0, 9.5)])
@pytest.mark.parametrize("kind", ["none", "t0", "tf", "both", "inner", "ends", "t0 alone",
                                  "tf alone"])
@pytest.mark.parametrize("dense", [False, True])
@pytest.mark.parametrize("method", ["DOP853", "RK45"])
def test_5_nfev_equals_scipy_for_every_t_eval(span, kind, dense, method):
    te = _t_eval(kind, *span)
    kw = dict(method=method, rtol=1e-8, atol=1e-10, t_eval=te, dense_output=dense)
    ref = scipy.integrate.solve_ivp(BODY, span, Y_BODY, **kw)
    got = rotode.solve_ivp(BODY, span, Y_BODY, **kw)
    assert got.nfev == ref.nfev
    np.testing.assert_allclose(got.t, ref.t, rtol=1e-8, atol=0)      # (the same steps)
    if not dense:       # integrate's own count of the same run
        res = rotode.integrate(BODY, span, Y_BODY, method=rotode.ivp.COMPILED_METHODS[method],
                               rtol=1e-8, atol=1e-10, t_eval=te)
        assert res.stats["nfev_pair"] == ref.nfev


@pytest.mark.parametrize("method", ["DOP853", "RK45"])
def test_5_nfev_with_t_eval_on_a_step_end(method):
    """A requested time equal to the end of one of rotode's accepted steps: SciPy evaluates
    the dense output of the step holding it (DOP853: three more evaluations)."""
    plain = rotode.solve_ivp(BODY, (0, 5), Y_BODY, method=method, rtol=1e-8, atol=1e-10)
    for te in ([plain.t[3]], [plain.t[2], plain.t[3], 2.0], [0.0, plain.t[5], 5.0]):
        ref = scipy.integrate.solve_ivp(BODY, (0, 5), Y_BODY, method=method, rtol=1e-8,
                                        atol=1e-10, t_eval=te)
        got = rotode.solve_ivp(BODY, (0, 5), Y_BODY, method=method, rtol=1e-8, atol=1e-10,
                               t_eval=te)
        assert got.nfev == ref.nfev


def test_5_nfev_with_events_and_t_eval_as_scipy():
    tilt = ev.AxisAngle([0, 0, 1], [0, 0, 1], np.radians(30), terminal=True, direction=1)
    for te in (None, np.linspace(0, 10, 11), np.r_[0.0, 0.5]):
        kw = dict(method="DOP853", rtol=1e-9, atol=1e-12, t_eval=te, events=tilt)
        ref = scipy.integrate.solve_ivp(TOP, (0, 10), Y_TOP, **kw)
        got = rotode.solve_ivp(TOP, (0, 10), Y_TOP, **kw)
        assert got.status == ref.status == 1
        assert got.nfev == ref.nfev


# ---- 6: atol = 0 with a zero component of y0 ------------------------------------------------

def _const_rate_q(w, t):
    """Body-frame constant rate from the identity: q(t) = exp(w t / 2)."""
    w = np.asarray(w, float)
    a = np.linalg.norm(w) * t / 2
    return np.r_[np.cos(a), np.sin(a) * w / np.linalg.norm(w)]


@pytest.mark.parametrize("method", ["dopri5", "dop853"])
@pytest.mark.parametrize("w", [[0.0, 0.0, 1.0], [0.3, 0.4, 1.0], [0.0, 2.0, 0.0]])
def test_6_atol_zero_kinematics_against_the_closed_form(method, w):
    res = rotode.integrate(w, (0, 3), [1.0, 0, 0, 0], method=method, rtol=1e-10, atol=0.0)
    assert res.status == 0 and res.success, res.message
    assert _angle(res.q[-1], _const_rate_q(w, 3.0)) < 1e-8
    # the components that stay exactly zero stay zero
    np.testing.assert_array_equal(res.q[-1][1:][np.asarray(w) == 0], 0.0)
    # the same through rotode.solve_ivp
    sol = rotode.solve_ivp(rotode.QuaternionKinematics(w), (0, 3), [1.0, 0, 0, 0],
                           method={"dopri5": "RK45", "dop853": "DOP853"}[method], rtol=1e-10,
                           atol=0.0)
    assert sol.status == 0, sol.message
    assert _angle(sol.y[:, -1], _const_rate_q(w, 3.0)) < 1e-8


@pytest.mark.parametrize("method", ["dopri5", "dop853"])
@pytest.mark.parametrize("w0", [[0.0, 0.0, 2.0], [0.3, 0.0, 1.0], [0.5, -0.2, 0.0]])
def test_6_atol_zero_rigid_body_against_the_exact_solution(method, w0):
    inertia = [1.0, 2.0, 2.5]
    y0 = np.r_[1.0, 0, 0, 0, w0]
    res = rotode.integrate(rotode.RigidBody(inertia), (0, 4), y0, method=method, rtol=1e-11,
                           atol=0.0)
    assert res.status == 0, res.message
    q_ex, w_ex = free_rigid_body(inertia, w0, 4.0)
    assert _angle(res.q[-1], q_ex) < 1e-8
    np.testing.assert_allclose(res.w[-1], w_ex, rtol=0, atol=1e-8)
    sol = rotode.solve_ivp(rotode.RigidBody(inertia), (0, 4), y0,
                           method={"dopri5": "RK45", "dop853": "DOP853"}[method], rtol=1e-11,
                           atol=0.0)
    assert sol.status == 0, sol.message
    assert _angle(sol.y[:4, -1], q_ex) < 1e-8


@pytest.mark.parametrize("method", ["RK45", "DOP853"])
def test_6_atol_zero_steps_are_scipys_from_the_first_one(method):
    """SciPy's own first-step selection divides 0 by 0 here (its loop then never ends);
    rotode's first step is Hairer's formula over the components that have a scale, and given
    that first step SciPy's RK45 controller takes rotode's steps (DOP853's error estimate of
    these first tiny steps is round-off, which the two sum in different orders)."""
    w = [0.3, 0.4, 1.0]
    rhs = rotode.QuaternionKinematics(w)
    got = rotode.solve_ivp(rhs, (0, 2), [1.0, 0, 0, 0], method=method, rtol=1e-9, atol=0.0)
    assert got.status == 0
    h0 = got.t[1] - got.t[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = scipy.integrate.solve_ivp(rhs, (0, 2), [1.0, 0, 0, 0], method=method, rtol=1e-9,
                                        atol=0.0, first_step=h0)
    assert ref.status == 0
    if method == "RK45":
        # the same steps to the error estimate's round-off: with atol = 0 the first steps'
        # estimates are round-off, and SciPy's norm (NumPy's, on the CPU's SIMD kernels) sums
        # them differently by machine (1e-8 on an AVX-512 CPU, 2.9e-7 measured on an AVX2 one)
        assert len(got.t) == len(ref.t)
        np.testing.assert_allclose(got.t, ref.t, rtol=2e-6, atol=0)
        assert got.nfev == ref.nfev + 1        # (+1: the initial-step selection's evaluation)
    # Hairer's initial step (Hairer, Norsett & Wanner sec. II.4) with the zero-scale
    # components left out of the norms (their terms 0/0), computed here in NumPy
    y0 = np.array([1.0, 0, 0, 0])
    f0 = rhs(0.0, y0)
    scale = 1e-9 * np.abs(y0)
    use = scale > 0

    def rms(x):
        return np.sqrt(np.sum((x[use] / scale[use]) ** 2) / 4)
    d0, d1 = rms(y0), rms(f0)
    hh = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
    d2 = rms(rhs(hh, y0 + hh * f0) - f0) / hh
    order = 4 if method == "RK45" else 7
    h1 = max(1e-6, hh * 1e-3) if max(d1, d2) <= 1e-15 else (0.01 / max(d1, d2)) ** (1 / (order + 1))
    assert h0 == pytest.approx(min(100 * hh, h1, 2.0), rel=1e-12)


def test_6_atol_zero_for_one_component_only():
    """A per-component atol with a zero entry where y0 is zero."""
    res = rotode.integrate([0.0, 0.0, 1.0], (0, 2), [1.0, 0, 0, 0], method="dop853",
                           rtol=1e-10, atol=[1e-12, 0.0, 0.0, 1e-12])
    assert res.status == 0
    assert _angle(res.q[-1], _const_rate_q([0, 0, 1.0], 2.0)) < 1e-9


# ---- 7: implicit methods on a thin rod -------------------------------------------------------

ROD = np.array([1e-8, 1.0, 1.0])
W_ROD = np.array([0.3, 0.8, 0.5])


@pytest.mark.parametrize("method, angle, tol", [("implicit_midpoint", 0.025, 1e-4),
                                                ("trapezoid", 0.25, 1e-6),
                                                ("object_trapezoid", 0.25, 1e-6)])
def test_7_thin_rod_substeps_follow_the_rotation(method, angle, tol):
    """Sub-steps per step: dt sqrt(|A L| |L| / lambda_min) / angle (the angle the body turns
    per step, |A L| dt, times the square root of the inertia ratio seen by L): 39 and 387 here,
    53,862 before; the answer against the exact solution."""
    t_end, dt = 1.0, 1e-3
    res = rotode.integrate(rotode.RigidBody(ROD), (0, t_end), np.r_[1.0, 0, 0, 0, W_ROD],
                           method=method, dt=dt)
    assert res.status == 0, res.message
    L = ROD * W_ROD
    rate = np.sqrt(np.linalg.norm(W_ROD) * np.linalg.norm(L) / ROD.min())
    assert res.stats["n_substeps"] == res.stats["n_steps"] * np.ceil(dt * rate / angle)
    assert res.stats["substep_retries"] == 0 and res.stats["newton_iter_max"] <= 4
    q_ex, w_ex = free_rigid_body(ROD, W_ROD, t_end)
    assert _angle(res.q[-1], q_ex) < tol
    np.testing.assert_allclose(res.w[-1], w_ex, rtol=0, atol=tol)


def test_7_midpoint_error_on_a_rod_follows_the_substep_angle():
    """The midpoint rule's own error on an elongated body: about angle^2 / 8 of the rate about
    the thin axis (docs/implicit-midpoint.md sec. 5), so 10x the angle costs 100x the error;
    angle 0 restores the Kantorovich sub-steps alone (its old default, 47,179 per step)."""
    errs = {}
    for angle in (0.25, 0.025):
        res = rotode.integrate(rotode.RigidBody(ROD), (0, 1.0), np.r_[1.0, 0, 0, 0, W_ROD],
                               method="implicit_midpoint", dt=1e-3, substep_angle=angle)
        errs[angle] = _angle(res.q[-1], free_rigid_body(ROD, W_ROD, 1.0)[0])
        assert errs[angle] < angle ** 2 / 8 * W_ROD[0] * 1.0
    assert 50 < errs[0.25] / errs[0.025] < 200
    with pytest.warns(RuntimeWarning, match="sub-steps per step"):
        old = rotode.integrate(rotode.RigidBody(ROD), (0, 2e-3), np.r_[1.0, 0, 0, 0, W_ROD],
                               method="implicit_midpoint", dt=1e-3, substep_angle=0.0)
    assert old.stats["n_substeps"] > 40_000
    with pytest.raises(ValueError, match="`substep_angle` must be in"):
        rotode.integrate(rotode.RigidBody(ROD), (0, 1.0), np.r_[1.0, 0, 0, 0, W_ROD],
                         method="implicit_midpoint", dt=1e-3, substep_angle=-0.1)


def test_7_thin_rod_twenty_seconds_are_quick_and_right():
    import time
    q_ex, _ = free_rigid_body(ROD, W_ROD, [5.0, 20.0])
    for method, tol in (("object_trapezoid", 1e-5), ("implicit_midpoint", 2e-3)):
        start = time.perf_counter()
        res = rotode.integrate(rotode.RigidBody(ROD), (0, 20), np.r_[1.0, 0, 0, 0, W_ROD],
                               method=method, dt=1e-3, t_eval=[5.0, 20.0])
        elapsed = time.perf_counter() - start
        assert res.status == 0
        assert max(_angle(res.q[i], q_ex[i]) for i in range(2)) < tol
        assert elapsed < 30.0            # about 4 minutes before (2e4 steps x 5e4 sub-steps)


def test_7_substep_bound_and_warning_for_a_step_far_too_long():
    """Sub-steps per step grow with dt times the body's rates; beyond 1000 a RuntimeWarning
    says so (the answer is still the method's, converged)."""
    with pytest.warns(RuntimeWarning, match="sub-steps per step on average: `dt` is long"):
        res = rotode.integrate(rotode.RigidBody(ROD), (0, 1.0), np.r_[1.0, 0, 0, 0, W_ROD],
                               method="implicit_midpoint", dt=0.5)
    assert res.status == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        rotode.integrate(rotode.RigidBody(ROD), (0, 0.05), np.r_[1.0, 0, 0, 0, W_ROD],
                         method="implicit_midpoint", dt=1e-3)


@pytest.mark.parametrize("inertia", [[1e-4, 1.0, 1.0], [0.01, 1.0, 1.005], [1.0, 1.0, 2.0 - 1e-6]])
@pytest.mark.parametrize("method", ["implicit_midpoint", "trapezoid", "object_trapezoid"])
def test_7_elongated_and_flat_bodies_converge_to_the_exact_solution(inertia, method):
    """Second order against the exact solution with the new sub-steps, on bodies far from
    spherical (a rod, a near-rod, a flat disk)."""
    w0 = np.array([0.4, -0.7, 0.5])
    angle = 0.025 if method == "implicit_midpoint" else 0.25
    w_ex = free_rigid_body(inertia, w0, np.linspace(0, 1, 101))[1]
    rate = np.sqrt(np.linalg.norm(w_ex, axis=1).max() * np.linalg.norm(inertia * w0)
                   / min(inertia))
    errs = []
    for n in (50, 100, 200):
        res = rotode.integrate(rotode.RigidBody(inertia), (0, 1.0), np.r_[1.0, 0, 0, 0, w0],
                               method=method, dt=1.0 / n)
        assert res.status == 0
        assert res.stats["n_substeps"] <= n * max(1, np.ceil(rate / n / angle))
        q_ex, w_ex = free_rigid_body(inertia, w0, 1.0)
        errs.append(_angle(res.q[-1], q_ex) + np.abs(res.w[-1] - w_ex).max())
    assert errs[-1] < 1e-3
    assert errs[2] < errs[0]


# ---- 8: a fixed dt below the spacing of floats near t0 -------------------------------------

@pytest.mark.parametrize("span", [(1e16, 1e16 + 10), (1e16 + 10, 1e16), (-1e17, -1e17 + 50)])
def test_8_dt_below_float_spacing_names_dt_and_t_span(span):
    for kw in (dict(method="rk4", model=[0, 0, 1.0], y0=[1.0, 0, 0, 0]),
               dict(method="implicit_midpoint", model=rotode.RigidBody([1, 2, 3]),
                    y0=[1.0, 0, 0, 0, 0.1, 0.2, 0.3]),
               dict(method="rkn4", model=rotode.RigidBody([1, 2, 3]),
                    y0=[1.0, 0, 0, 0, 0.1, 0.2, 0.3])):
        model, y0 = kw.pop("model"), kw.pop("y0")
        for extra in ({}, {"t_eval": [span[0], span[1]]}, {"save_every": 3}):
            with pytest.raises(ValueError, match=r"`dt`=0\.01.*spacing of floats.*`t_span`"):
                rotode.integrate(model, span, y0, dt=0.01, **kw, **extra)


def test_8_solver_classes_name_their_step():
    with pytest.raises(ValueError, match=r"`step`=0\.01.*spacing of floats"):
        scipy.integrate.solve_ivp(rotode.QuaternionKinematics([0, 0, 1.0]), (1e16, 1e16 + 10),
                                  [1.0, 0, 0, 0], method=rotode.RK4, step=0.01)
    with pytest.raises(ValueError, match=r"`dt`=0\.01.*spacing of floats"):
        scipy.integrate.solve_ivp(rotode.QuaternionKinematics([0, 0, 1.0]), (1e16, 1e16 + 10),
                                  [1.0, 0, 0, 0], method=rotode.RK4, dt=0.01)


def test_8_a_coarse_grid_near_large_t_still_runs():
    """dt above the spacing (2 at 1e16): uneven but advancing steps still run."""
    res = rotode.integrate([0, 0, 1e-16], (1e16, 1e16 + 64), [1.0, 0, 0, 0], method="rk4",
                           dt=4.0)
    assert res.status == 0 and np.all(np.diff(res.t) > 0)


# ---- 10: out= overlapping the input ----------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 5, 1000])
def test_10_so3_exp_out_overlapping_v_is_refused_or_right(n):
    rng = np.random.default_rng(n)
    out = np.empty((n, 3, 3))
    v = out.reshape(-1)[:3 * n].reshape(n, 3)        # a C-contiguous view of out
    v[...] = rng.normal(size=(n, 3))
    expected = so3.exp(v.copy())
    try:
        got = so3.exp(v, out=out)
    except ValueError as err:
        assert "`out` overlaps `v`" in str(err)
    else:
        np.testing.assert_array_equal(got, expected)
    # a view of the tail of out, and out viewed as the same memory with another shape
    out = np.empty((n, 3, 3))
    v = out.reshape(-1)[-3 * n:].reshape(n, 3)
    v[...] = rng.normal(size=(n, 3))
    expected = so3.exp(v.copy())
    try:
        np.testing.assert_array_equal(so3.exp(v, out=out), expected)
    except ValueError as err:
        assert "`out` overlaps `v`" in str(err)


def test_10_so3_exp_out_apart_from_v_still_works():
    v = np.random.default_rng(3).normal(size=(4, 3))
    buf = np.empty((2, 4, 3, 3))
    got = so3.exp(v, out=buf[1])
    assert got is buf[1] or np.shares_memory(got, buf)
    np.testing.assert_array_equal(buf[1], so3.exp(v))


def test_10_every_out_parameter_checks_overlap():
    """Every public function with an ``out`` parameter in the kernel-wrapper modules refuses an
    ``out`` overlapping its inputs (same helper everywhere)."""
    import inspect

    from rotode import _validation, quaternion, steps
    with_out = [(m.__name__, name) for m in (so3, quaternion, steps) for name in m.__all__
                if callable(getattr(m, name))
                and "out" in inspect.signature(getattr(m, name)).parameters]
    assert ("rotode.so3", "exp") in with_out
    assert all(mod in ("rotode.so3", "rotode.quaternion", "rotode.steps")
               for mod, _ in with_out), with_out
    q = np.tile([1.0, 0, 0, 0], (4, 1))
    buf = np.zeros(4 * 4 + 3)
    w = buf[4:7]
    with pytest.raises(ValueError, match="`out` overlaps `w`"):
        steps.lie_euler(q, w, 0.1, out=buf[:16].reshape(4, 4))
    # the batch loops of rotode/_rows.hpp (tests/test_rows.py checks each of them)
    with pytest.raises(ValueError, match="`out` overlaps `v`"):
        quaternion.rotate(q, buf[4:16].reshape(4, 3), out=buf[:12].reshape(4, 3))
    assert callable(_validation.check_out_overlap)


# ---- terminal events: what integrate returns -------------------------------------------------

TILT = ev.AxisAngle([0, 0, 1], [0, 0, 1], np.radians(60), terminal=True, direction=1)


@pytest.mark.parametrize("method", ["dop853", "rkmk8"])
def test_terminal_event_single_body_ends_at_the_event(method):
    res = rotode.integrate(TOP, (0, 10), Y_TOP, method=method, rtol=1e-10, atol=1e-12,
                           events=TILT)
    assert res.status == 1 and res.success
    assert res.t.shape == (2,) and res.t[0] == 0.0 and res.t[-1] == res.t_stop
    assert np.isfinite(res.y).all() and np.isfinite(res.w).all()
    np.testing.assert_array_equal(res.y[-1], res.y_events[0][-1])
    np.testing.assert_array_equal(res.y[-1], res.y_final)
    np.testing.assert_array_equal(res.w[-1], res.y_final[4:])
    q = res.y[-1, :4] / np.linalg.norm(res.y[-1, :4])
    assert abs(rotode.quaternion.rotate(q, [0, 0, 1.0])[2] - 0.5) < 1e-10   # at 60 degrees
    # as SciPy's solve_ivp: its last time and state are the event's
    ref = scipy.integrate.solve_ivp(TOP, (0, 10), Y_TOP, method="DOP853", rtol=1e-12,
                                    atol=1e-14, events=TILT)
    assert abs(ref.t[-1] - res.t[-1]) < 1e-8
    np.testing.assert_allclose(ref.y[:, -1], res.y[-1], rtol=0, atol=1e-7)
    if method == "dop853":      # and rotode.solve_ivp ends on the same bits
        sol = rotode.solve_ivp(TOP, (0, 10), Y_TOP, method="DOP853", rtol=1e-10, atol=1e-12,
                               events=TILT)
        assert sol.t[-1] == res.t[-1]
        np.testing.assert_array_equal(sol.y[:, -1], res.y[-1])


def test_terminal_event_single_body_with_t_eval_as_solve_ivp():
    t_eval = np.linspace(0, 10, 101)
    res = rotode.integrate(TOP, (0, 10), Y_TOP, method="dop853", rtol=1e-10, atol=1e-12,
                           events=TILT, t_eval=t_eval)
    assert res.status == 1
    np.testing.assert_array_equal(res.t, t_eval[t_eval <= res.t_stop])
    assert np.isfinite(res.y).all() and res.y.shape == (res.t.size, 7)
    sol = rotode.solve_ivp(TOP, (0, 10), Y_TOP, method="DOP853", rtol=1e-10, atol=1e-12,
                           events=TILT, t_eval=t_eval)
    np.testing.assert_array_equal(sol.t, res.t)
    np.testing.assert_array_equal(sol.y.T, res.y)
    np.testing.assert_array_equal(res.y_final, res.y_events[0][-1])
    # backwards, with the stop between two requested times
    back = rotode.integrate(TOP, (0, -10), Y_TOP, method="dop853", rtol=1e-10, atol=1e-12,
                            events=ev.AxisAngle([0, 0, 1], [0, 0, 1], np.radians(60),
                                                terminal=True), t_eval=-t_eval)
    assert back.status == 1
    np.testing.assert_array_equal(back.t, -t_eval[-t_eval >= back.t_stop])


def test_terminal_event_batch_keeps_the_grid_and_gives_final_rows():
    rng = np.random.default_rng(11)
    n = 12
    w0 = np.c_[rng.uniform(0.2, 0.8, n), np.zeros(n), rng.uniform(2.0, 10.0, n)]
    y0 = np.c_[np.tile([1.0, 0, 0, 0], (n, 1)), w0]
    tilt = ev.AxisAngle([0, 0, 1], [0, 0, 1], np.radians(45), terminal=True, direction=1)
    t_eval = np.linspace(0, 30, 7)
    for kw in ({}, {"t_eval": t_eval}):
        batch = rotode.integrate(TOP, (0, 30), y0, method="dop853", rtol=1e-9, events=tilt, **kw)
        assert batch.t.size == (2 if not kw else 7)
        assert batch.y_final.shape == (n, 7) and np.isfinite(batch.y_final).all()
        stopped = np.isfinite(batch.t_stop)
        assert 0 < stopped.sum() < n
        for i in range(n):
            one = rotode.integrate(TOP, (0, 30), y0[i], method="dop853", rtol=1e-9,
                                   events=tilt, **kw)
            np.testing.assert_array_equal(batch.y_final[i], one.y_final)
            if stopped[i]:
                assert one.t[-1] == batch.t_stop[i] if not kw else one.t[-1] <= batch.t_stop[i]
                assert np.isnan(batch.y[i, -1]).all()
                np.testing.assert_array_equal(batch.y_final[i], batch.y_events[i][0][-1])
            else:
                np.testing.assert_array_equal(batch.y[i, -1], batch.y_final[i])
                np.testing.assert_array_equal(batch.y[i], one.y)


def test_final_row_without_terminal_stop_and_without_events():
    res = rotode.integrate(TOP, (0, 1), Y_TOP, method="dop853", rtol=1e-9,
                           events=ev.Component("w", 2, 100.0))
    assert res.status == 0 and np.isnan(res.t_stop)
    np.testing.assert_array_equal(res.y_final, res.y[-1])
    plain = rotode.integrate(TOP, (0, 1), Y_TOP, method="dop853", rtol=1e-9)
    assert plain.y_final is None and plain.t_stop is None


def test_terminal_event_dask_batch_has_final_rows():
    da = pytest.importorskip("dask.array")
    n = 6
    rng = np.random.default_rng(2)
    y0 = np.c_[np.tile([1.0, 0, 0, 0], (n, 1)),
               rng.uniform(0.2, 0.8, n), np.zeros(n), rng.uniform(2.0, 10.0, n)]
    tilt = ev.AxisAngle([0, 0, 1], [0, 0, 1], np.radians(45), terminal=True, direction=1)
    ref = rotode.integrate(TOP, (0, 30), y0, method="dop853", rtol=1e-9, events=tilt)
    lazy = rotode.integrate(TOP, (0, 30), da.from_array(y0, chunks=(3, 7)), method="dop853",
                            rtol=1e-9, events=tilt)
    np.testing.assert_array_equal(lazy.y_final.compute(), ref.y_final)
    np.testing.assert_array_equal(lazy.compute().y_final, ref.y_final)
