"""rotode.solve_ivp: SciPy's interface and answers, rotode's compiled loop for rotode models."""
import pickle

import numpy as np
import pytest
import scipy.integrate
from scipy.integrate import OdeSolution

import rotode
from rotode.solvers import CHUNK_STEPS

W = rotode.omega.Sinusoid(amplitude=np.pi / 2, rate=2 * np.pi / 10,
                          phase=[0, 2 * np.pi / 3, 4 * np.pi / 3])     # Rucker 2018 benchmark
KIN = rotode.QuaternionKinematics(W)
TOP = rotode.RigidBody([1, 1, 0.5], torque=rotode.torque.Gravity(1.0, 1.0, [0, 0, 1]))
CASES = {"kinematics": (KIN, np.array([1.0, 0, 0, 0])),
         "top": (TOP, np.array([1.0, 0, 0, 0, 1.5, 0, 1]))}


@pytest.mark.parametrize("method", ["RK45", "DOP853"])
@pytest.mark.parametrize("case", CASES)
def test_same_steps_evaluations_and_answers_as_scipy(method, case):
    fun, y0 = CASES[case]
    rtol, atol = 1e-10, 1e-12
    ours = rotode.solve_ivp(fun, (0, 100), y0, method=method, rtol=rtol, atol=atol)
    ref = scipy.integrate.solve_ivp(fun, (0, 100), y0, method=method, rtol=rtol, atol=atol)
    assert ours.success and ours.status == 0 and ours.message == ref.message
    assert abs(len(ours.t) - len(ref.t)) <= 0.05 * len(ref.t)   # (equal here)
    assert ours.nfev == ref.nfev and ours.njev == ours.nlu == 0
    assert ours.t[0] == 0 and ours.t[-1] == 100   # (step sizes agree to ~1e-5: rounding)
    assert np.abs(ours.y[:, -1] - ref.y[:, -1]).max() < 10 * rtol * np.abs(ref.y).max()
    assert ours.y.shape == ref.y.shape and ours.sol is None
    assert ours.t_events is None and ours.y_events is None


@pytest.mark.parametrize("method", ["RK45", "DOP853"])
@pytest.mark.parametrize("case", CASES)
def test_t_eval_and_dense_output_as_scipy(method, case):
    fun, y0 = CASES[case]
    t_eval = np.linspace(0, 30, 97)
    kw = dict(method=method, rtol=1e-9, atol=1e-12, t_eval=t_eval, dense_output=True)
    ours = rotode.solve_ivp(fun, (0, 30), y0, **kw)
    ref = scipy.integrate.solve_ivp(fun, (0, 30), y0, **kw)
    np.testing.assert_array_equal(ours.t, t_eval)
    assert np.abs(ours.y - ref.y).max() < 1e-8
    assert isinstance(ours.sol, OdeSolution)
    ts = np.linspace(0, 30, 1001)
    assert np.abs(ours.sol(ts) - ref.sol(ts)).max() < 1e-8
    # the interpolant reproduces the states at t_eval (the same continuous extension)
    np.testing.assert_allclose(ours.sol(t_eval), ours.y, rtol=0, atol=1e-13)
    assert ours.sol(12.5).shape == y0.shape
    # ... and the interpolants SciPy would build, at the step ends exactly
    full = rotode.solve_ivp(fun, (0, 30), y0, method=method, rtol=1e-9, atol=1e-12,
                            dense_output=True)
    np.testing.assert_allclose(full.sol(full.t), full.y, rtol=0, atol=1e-14)
    seg = full.sol.interpolants[3]
    assert seg.t_old == full.t[3] and seg.t == full.t[4]


def test_backwards_in_time():
    fun, y0 = CASES["top"]
    ours = rotode.solve_ivp(fun, (10, 0), y0, method="DOP853", rtol=1e-10, atol=1e-12,
                            dense_output=True)
    ref = scipy.integrate.solve_ivp(fun, (10, 0), y0, method="DOP853", rtol=1e-10, atol=1e-12,
                                    dense_output=True)
    assert len(ours.t) == len(ref.t) and ours.t[-1] == 0.0
    assert np.abs(ours.sol(4.2) - ref.sol(4.2)).max() < 1e-9


def test_other_callables_methods_and_events_are_scipys_own_answers():
    def fun(t, q):
        return KIN(t, q)

    def g(t, y):
        return y[0] - 0.5

    for args in [dict(fun=fun, method="DOP853"), dict(fun=KIN, method="Radau"),
                 dict(fun=KIN, method=scipy.integrate.RK45),
                 dict(fun=KIN, method="DOP853", events=g, args=())]:
        ours = rotode.solve_ivp(t_span=(0, 10), y0=[1.0, 0, 0, 0], rtol=1e-8, **args)
        if "args" in args:     # SciPy passes args to the events too: g(t, y, *args)
            args = dict(args, events=lambda t, y: g(t, y))
        ref = scipy.integrate.solve_ivp(t_span=(0, 10), y0=[1.0, 0, 0, 0], rtol=1e-8, **args)
        np.testing.assert_array_equal(ours.t, ref.t)
        np.testing.assert_array_equal(ours.y, ref.y)
        assert ours.nfev == ref.nfev
    assert len(ours.t_events[0]) > 0


def test_a_long_run_is_made_once_python_events_called_once_per_evaluation():
    """The step record grows in the driver (no second run when it fills): a Python event is
    called exactly as often as in the same run without a record (t_eval), and the answer is
    that of a record large enough from the start."""
    calls = []

    def g(t, y):
        calls.append(t)
        return y[5] - 1.0

    body, y0 = rotode.RigidBody([2.5, 1.4, 1.3]), [1.0, 0, 0, 0, 0.01, 5, 0.01]
    kw = dict(method="RK45", rtol=1e-10, atol=1e-12, events=g)
    full = rotode.solve_ivp(body, (0, 100), y0, dense_output=True, **kw)
    n_full = len(calls)
    calls.clear()
    at_end = rotode.solve_ivp(body, (0, 100), y0, t_eval=[100.0], **kw)
    assert len(full.t) > 4096 + 1                   # more steps than the old first record
    assert n_full == len(calls) < 1.1 * len(full.t)
    np.testing.assert_array_equal(full.t_events[0], at_end.t_events[0])
    np.testing.assert_array_equal(full.y[:, -1], at_end.y[:, -1])
    assert full.nfev == at_end.nfev
    np.testing.assert_array_equal(full.sol(55.5), full.sol.interpolants[
        np.searchsorted(full.t, 55.5) - 1](55.5))


def test_rotode_models_reach_rotode_solver_classes_unwrapped():
    """A rotode model with a rotode OdeSolver class goes to SciPy as it is (the class reads
    the model), so the answer is SciPy's exactly."""
    for fun, y0 in CASES.values():
        ours = rotode.solve_ivp(fun, (0, 2), y0, method=rotode.RKMK8, rtol=1e-9)
        ref = scipy.integrate.solve_ivp(fun, (0, 2), y0, method=rotode.RKMK8, rtol=1e-9)
        assert ours.success
        np.testing.assert_array_equal(ours.t, ref.t)
        np.testing.assert_array_equal(ours.y, ref.y)


@pytest.mark.parametrize("name, cls", [("RKMK8", rotode.RKMK8), ("rkmk8", rotode.RKMK8),
                                       ("RKMK5", rotode.RKMK5), ("rkmk5", rotode.RKMK5)])
def test_a_rotode_method_named_by_a_string_is_its_class_for_rotode_models(name, cls):
    # the model's own quaternion is known: a string names rotode's solver class (SciPy's
    # own error, which lists SciPy's methods only, was what a user got before)
    for fun, y0 in CASES.values():
        by_name = rotode.solve_ivp(fun, (0, 2), y0, method=name, rtol=1e-9)
        by_class = rotode.solve_ivp(fun, (0, 2), y0, method=cls, rtol=1e-9)
        assert by_name.success
        np.testing.assert_array_equal(by_name.t, by_class.t)
        np.testing.assert_array_equal(by_name.y, by_class.y)
    fun, y0 = CASES["kinematics"]
    np.testing.assert_array_equal(
        rotode.solve_ivp(fun, (0, 2), y0, method="magnus8", rtol=1e-9).y,
        rotode.solve_ivp(fun, (0, 2), y0, method=rotode.Magnus8, rtol=1e-9).y)
    # rotode's lower-case names of its pairs are SciPy's names: the compiled loop
    np.testing.assert_array_equal(
        rotode.solve_ivp(fun, (0, 2), y0, method="dop853", rtol=1e-9).y,
        rotode.solve_ivp(fun, (0, 2), y0, method="DOP853", rtol=1e-9).y)


def test_a_rotode_method_string_that_cannot_run_says_what_to_give():
    fun, y0 = CASES["top"]

    def f(t, y):
        return fun(t, y)
    with pytest.raises(ValueError, match="`method`='RKMK8'.*give `quaternions=`"):
        rotode.solve_ivp(f, (0, 1), y0, method="RKMK8")
    with pytest.raises(ValueError, match="`method`='cg3'.*rotode's models"):
        rotode.solve_ivp(f, (0, 1), y0, method="cg3")
    with pytest.raises(ValueError, match="`method`='Magnus8'.*does not integrate a RigidBody"):
        rotode.solve_ivp(fun, (0, 1), y0, method="Magnus8")
    with pytest.raises(ValueError, match="no OdeSolver class.*rotode.integrate"):
        rotode.solve_ivp(fun, (0, 1), y0, method="rkmk3")
    with pytest.raises(ValueError, match="`method` must be one of"):     # SciPy's own
        rotode.solve_ivp(fun, (0, 1), y0, method="nosuch")
    # with quaternions=, the user's-state path takes rotode's names as before
    assert rotode.solve_ivp(f, (0, 1), y0, method="RKMK8", quaternions=[0]).success


@pytest.mark.parametrize("kw", [{}, dict(dense_output=True), dict(t_eval=[1.5]),
                                dict(t_eval=np.array([])),
                                dict(events=rotode.events.Component("w", 0)),
                                dict(events=[], dense_output=True, t_eval=[1.5])])
@pytest.mark.parametrize("method", ["RK45", "DOP853"])
def test_zero_length_span_as_scipy(method, kw):
    fun, y0 = CASES["top"]
    ours = rotode.solve_ivp(fun, (1.5, 1.5), y0, method=method, **kw)
    ref = scipy.integrate.solve_ivp(fun, (1.5, 1.5), y0, method=method, **kw)
    assert ours.keys() == ref.keys()
    for key in ("status", "message", "success", "nfev", "njev", "nlu"):
        assert ours[key] == ref[key]
    assert type(ours.t) is type(ref.t) and type(ours.y) is type(ref.y)
    np.testing.assert_array_equal(ours.t, ref.t)
    np.testing.assert_array_equal(ours.y, ref.y)
    assert (ours.sol is None) == (ref.sol is None)
    if ref.sol is not None:
        np.testing.assert_array_equal(ours.sol(1.5), ref.sol(1.5))
    assert (ours.t_events is None) == (ref.t_events is None)
    if ref.t_events is not None:
        assert [a.shape for a in ours.t_events] == [a.shape for a in ref.t_events]
        assert [a.shape for a in ours.y_events] == [a.shape for a in ref.y_events]


@pytest.mark.parametrize("method", ["RK45", "DOP853"])
def test_event_fields_shaped_as_scipy_s(method):
    fun, y0 = CASES["top"]
    never = rotode.events.Component("w", 2, value=100.0)
    cases = [[], [never], [rotode.events.Component("q", 3), never]]
    for events in cases:
        ours = rotode.solve_ivp(fun, (0, 5), y0, method=method, events=events)
        ref = scipy.integrate.solve_ivp(fun, (0, 5), y0, method=method, events=events)
        assert type(ours.t_events) is type(ref.t_events) is list
        assert type(ours.y_events) is type(ref.y_events) is list
        assert [a.shape for a in ours.t_events] == [a.shape for a in ref.t_events]
        assert [a.shape for a in ours.y_events] == [a.shape for a in ref.y_events]
        assert [a.dtype for a in ours.y_events] == [a.dtype for a in ref.y_events]


def test_failure_is_reported_and_the_result_ends_at_the_last_step():
    blow_up = rotode.RigidBody([2.5, 1.4, 1.3], torque=rotode.torque.Constant([0, 0, 1e308]))
    res = rotode.solve_ivp(blow_up, (0, 10), [1.0, 0, 0, 0, 0, 0, 1.0], method="DOP853")
    assert res.status == -1 and not res.success
    assert "spacing of floats" in res.message
    assert np.isfinite(res.y).all() and res.t[-1] < 10


def test_bad_input_and_extraneous_options():
    fun, y0 = CASES["top"]
    with pytest.raises(ValueError, match="y0"):
        rotode.solve_ivp(fun, (0, 1), y0[:4], method="DOP853")
    with pytest.raises(ValueError, match="rtol"):
        rotode.solve_ivp(fun, (0, 1), y0, method="DOP853", rtol=-1.0)
    with pytest.raises(ValueError, match="t_eval"):
        rotode.solve_ivp(fun, (0, 1), y0, method="DOP853", t_eval=[0.5, 2.0])
    with pytest.warns(UserWarning, match="no effect"):
        rotode.solve_ivp(fun, (0, 1), y0, method="DOP853", jac=None)


# ---- error-controlled OdeSolver classes: scipy.integrate.solve_ivp(method=rotode.RKMK8) ------

@pytest.mark.parametrize("cls, method", [(rotode.RKMK5, "rkmk5"), (rotode.RKMK8, "rkmk8")])
@pytest.mark.parametrize("case", CASES)
def test_rkmk_solver_classes_take_integrates_steps(cls, method, case):
    """The classes advance chunks of steps with the compiled driver, each chunk continuing
    the last one with its bits (the controller's proposal, the pair's first stage and the
    base orientation the last accept made): the steps and states are integrate's, bit for
    bit (CHUNK_STEPS = 64: every case crosses a chunk boundary)."""
    fun, y0 = CASES[case]
    ts = np.linspace(0, 30, 61)
    sol = scipy.integrate.solve_ivp(fun, (0, 30), y0, method=cls, rtol=1e-9, atol=1e-12,
                                    dense_output=True)
    res = rotode.integrate(fun, (0, 30), y0, method=method, rtol=1e-9, atol=1e-12, t_eval=ts)
    assert sol.success and len(sol.t) - 1 == res.stats["n_steps"] > CHUNK_STEPS
    steps = rotode.integrate(fun, (0, 30), y0, method=method, rtol=1e-9, atol=1e-12,
                             t_eval=sol.t)
    np.testing.assert_array_equal(sol.y[:, 1:], steps.y[1:].T)
    # dense output on the group: the pair's extension of v mapped through exp, unit q
    dense = sol.sol(ts)
    assert np.abs(dense.T - res.y).max() < 2e-15     # (NumPy's exp and product: a few ulp)
    assert np.abs(np.linalg.norm(dense[:4], axis=0) - 1).max() < 1e-15
    assert np.abs(np.linalg.norm(sol.y[:4], axis=0) - 1).max() < 1e-15


def test_adaptive_magnus_solver_class():
    fun = KIN
    sol = scipy.integrate.solve_ivp(fun, (0, 30), [1.0, 0, 0, 0], method=rotode.Magnus8,
                                    rtol=1e-9, atol=1e-12, t_eval=[10.0, 30.0])
    res = rotode.integrate(fun, (0, 30), [1.0, 0, 0, 0], method="magnus8", rtol=1e-9,
                           atol=1e-12, t_eval=[10.0, 30.0])
    assert sol.success
    np.testing.assert_array_equal(sol.y, res.y.T)       # (10.0: integrate's value in a step)
    with pytest.raises(TypeError, match="fixed steps"):
        scipy.integrate.solve_ivp(fun, (0, 1), [1.0, 0, 0, 0], method=rotode.Magnus4)
    with pytest.raises(ValueError, match="not both"):
        scipy.integrate.solve_ivp(fun, (0, 1), [1.0, 0, 0, 0], method=rotode.Magnus8,
                                  step=0.1, rtol=1e-6)
    with pytest.raises(ValueError, match="rtol"):
        scipy.integrate.solve_ivp(fun, (0, 1), [1.0, 0, 0, 0], method=rotode.RKMK8, rtol=-1.0)


AUDIT = rotode.omega.Sinusoid([1, 0.5, 0.2], 0.7, [0.3, 0.2, 0.1])


def _tilt(degrees):
    return rotode.events.AxisAngle([0, 0, 1], [0, 0, 1], np.radians(degrees))


@pytest.mark.parametrize("cls, method", [(rotode.Magnus6, "magnus6"), (rotode.Magnus8, "magnus8")])
@pytest.mark.parametrize("form", ["body", "world", "function body", "function world"])
def test_adaptive_magnus_classes_dense_output_is_integrates(cls, method, form):
    """The adaptive Magnus classes' dense output is rotode.integrate's inside a step (the
    step's Magnus formula over [t_n, t], not an interpolant): SciPy's event times and sol(t)
    agree with integrate's to round-off, and sol(t) is a unit quaternion (with the cubic
    Hermite interpolant they were 3e-8 (magnus6) and 6e-6 (magnus8) off)."""
    frame = form.split()[-1]
    kin = rotode.QuaternionKinematics(AUDIT, frame=frame)
    fun, extra = kin, {}
    if form.startswith("function"):
        def fun(t, q):
            w = np.concatenate([[0.0], AUDIT(t)])
            m = rotode.quaternion.multiply
            return 0.5 * (m(q, w) if frame == "body" else m(w, q))

        extra = {"frame": frame}
    kw = dict(rtol=1e-10, atol=1e-12)
    ts = np.linspace(0, 100, 1001)
    sol = scipy.integrate.solve_ivp(fun, (0, 100), [1.0, 0, 0, 0], method=cls, dense_output=True,
                                    events=_tilt(30), **kw, **extra)
    res = rotode.integrate(kin, (0, 100), [1.0, 0, 0, 0], method=method, events=_tilt(30), **kw)
    at = rotode.integrate(kin, (0, 100), [1.0, 0, 0, 0], method=method, t_eval=ts, **kw)
    assert sol.success and len(sol.t_events[0]) == len(res.t_events[0]) >= 4
    assert np.abs(sol.t_events[0] - res.t_events[0]).max() < 1e-12
    dense = sol.sol(ts)
    if fun is kin:                  # (a plain function: w recovered from it, to round-off)
        np.testing.assert_array_equal(dense.T, at.y)
    assert np.abs(dense.T - at.y).max() < 1e-13
    assert np.abs(np.linalg.norm(dense, axis=0) - 1).max() < 1e-14


@pytest.mark.parametrize("cls", [rotode.Magnus6, rotode.Magnus8])
def test_adaptive_magnus_classes_find_the_cone_crossings_exactly(cls):
    """A constant rate w = 1.3 [sin b, 0, cos b] (b = 50 deg) turns the body z axis on a cone:
    its angle to the world z axis is 60 deg at t = (phi0 + 2 pi k)/1.3 and
    (2 pi (k+1) - phi0)/1.3, cos phi0 = (cos 60 - cos^2 b)/sin^2 b.  Magnus is exact for a
    constant rate, and so are the event times through SciPy (the Hermite interpolant: 2e-6 s
    off)."""
    b, rate = np.radians(50), 1.3
    kin = rotode.QuaternionKinematics(rotode.omega.Constant(rate * np.array([np.sin(b), 0,
                                                                             np.cos(b)])))
    sol = scipy.integrate.solve_ivp(kin, (0, 100), [1.0, 0, 0, 0], method=cls, rtol=1e-10,
                                    atol=1e-12, max_step=0.5, events=_tilt(60))
    phi0 = np.arccos((0.5 - np.cos(b) ** 2) / np.sin(b) ** 2)
    k = np.arange(30)
    exact = np.sort(np.r_[phi0 + 2 * np.pi * k, 2 * np.pi * (k + 1) - phi0]) / rate
    exact = exact[exact < 100]
    assert sol.success and len(sol.t_events[0]) == len(exact) > 20
    assert np.abs(sol.t_events[0] - exact).max() < 1e-12


def test_adaptive_magnus_dense_output_of_one_step():
    """One step's dense output: any order and repeats of times, a scalar, the step's ends, and
    outside the step the same Magnus formula from the step's start (unit quaternions)."""
    sol = scipy.integrate.solve_ivp(KIN, (5, 0), [1.0, 0, 0, 0], method=rotode.Magnus8,
                                    rtol=1e-9, atol=1e-12, dense_output=True)
    seg = sol.sol.interpolants[3]
    a, b = seg.t_old, seg.t
    x = np.array([b, a, 0.5 * (a + b), a, 0.5 * (a + b), a + 0.3, b - 0.2])
    y = seg(x)
    assert y.shape == (4, 7) and seg(x[2]).shape == (4,)
    np.testing.assert_array_equal(y[:, 2], seg(x[2]))
    np.testing.assert_array_equal(y[:, 2], y[:, 4])
    np.testing.assert_array_equal(y[:, 0], sol.y[:, 4])      # the step's end: its state
    assert np.abs(y[:, 1] - sol.y[:, 3]).max() < 1e-15       # its start: retracted
    assert np.abs(np.linalg.norm(y, axis=0) - 1).max() < 1e-15
    res = rotode.integrate(KIN, (5, 0), [1.0, 0, 0, 0], method="magnus8", rtol=1e-9, atol=1e-12,
                           t_eval=[0.5 * (a + b)])
    np.testing.assert_array_equal(y[:, 2], res.y[0])
    again = pickle.loads(pickle.dumps(sol.sol))                  # (no module held)
    np.testing.assert_array_equal(again(x), sol.sol(x))


def test_events_with_the_rkmk8_class_locate_the_thandle_flips():
    """SciPy's event location on rotode.RKMK8's dense output: the T-handle's w_y sign changes
    (the Dzhanibekov flips) against the exact solution, same count over 100 s, times within
    1e-7 s at rtol 1e-12."""
    from scipy.optimize import brentq

    from rotode.exact import free_rigid_body

    inertia, w0 = np.array([2.5, 1.4, 1.3]), np.array([0.01, 5.0, 0.01])

    def flip(t, y):
        return y[5]

    flip.direction = -1
    sol = scipy.integrate.solve_ivp(rotode.RigidBody(inertia), (0, 100), np.r_[1.0, 0, 0, 0, w0],
                                    method=rotode.RKMK8, rtol=1e-12, atol=1e-14, events=flip)
    ts = np.linspace(0, 100, 20001)
    wy = free_rigid_body(inertia, w0, ts)[1][:, 1]
    idx = np.flatnonzero((wy[:-1] > 0) & (wy[1:] <= 0))
    exact = [brentq(lambda t: free_rigid_body(inertia, w0, t)[1][1], ts[k], ts[k + 1],
                    xtol=1e-14) for k in idx]
    assert len(sol.t_events[0]) == len(exact) >= 3
    assert np.abs(sol.t_events[0] - exact).max() < 1e-7


@pytest.mark.parametrize("method", ["RK45", "DOP853"])
@pytest.mark.parametrize("case", ["kinematics", "top", "top-terminal"])
def test_events_in_the_compiled_loop_as_in_scipy(method, case):
    """Events in rotode.solve_ivp run in the compiled loop (a Python function too): the same
    occurrences as SciPy's own loop on the same steps, times within 10 rtol, the same terminal
    stop and the result ending there (t, y and the dense output)."""
    def g(t, y):
        return y[0] - 0.5

    tilt = rotode.events.AxisAngle([0, 0, 1], [0, 0, 1], np.radians(60), direction=1,
                                   terminal=2 if case == "top-terminal" else False)
    fun, y0 = CASES["kinematics" if case == "kinematics" else "top"]
    events = g if case == "kinematics" else tilt
    kw = dict(method=method, rtol=1e-10, atol=1e-12, events=events, dense_output=True)
    ours = rotode.solve_ivp(fun, (0, 100), y0, **kw)
    ref = scipy.integrate.solve_ivp(fun, (0, 100), y0, **kw)
    assert ours.status == ref.status and ours.success
    assert [len(x) for x in ours.t_events] == [len(x) for x in ref.t_events]
    assert len(ours.t_events[0]) >= 2
    assert np.abs(ours.t_events[0] - ref.t_events[0]).max() < 10 * 1e-10
    assert ours.y_events[0].shape == ref.y_events[0].shape
    assert len(ours.t) == len(ref.t) and abs(ours.t[-1] - ref.t[-1]) < 1e-9
    np.testing.assert_allclose(ours.sol(ours.t[-1]), ours.y[:, -1], rtol=0, atol=1e-13)
    if case == "top-terminal":
        assert ours.status == 1 and ours.t[-1] == ours.t_events[0][-1] < 100


def test_as_rotation_at_any_time_from_the_dense_output():
    sol = scipy.integrate.solve_ivp(TOP, (0, 10), CASES["top"][1], method=rotode.RKMK8,
                                    rtol=1e-10, atol=1e-12, dense_output=True)
    rot = rotode.as_rotation(sol, t=[0.5, 3.25])
    ref = rotode.integrate(TOP, (0, 10), CASES["top"][1], method="rkmk8", rtol=1e-10,
                           atol=1e-12, t_eval=[0.5, 3.25])
    assert len(rot) == 2
    assert (rot * ref.rotation.inv()).magnitude().max() < 1e-12
    assert rotode.as_rotation(sol, t=1.0).single
    with pytest.raises(ValueError, match="dense output"):
        rotode.as_rotation(scipy.integrate.solve_ivp(TOP, (0, 1), CASES["top"][1]), t=0.5)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")      # (SciPy's own run meets the value)
@pytest.mark.parametrize("method", ["RK45", "LSODA"])
@pytest.mark.parametrize("value, error", [(None, TypeError), (np.nan, ValueError),
                                          (np.inf, ValueError)])
def test_python_fun_returning_none_or_nan_raises_instead_of_hanging(value, error, method):
    """SciPy (1.17) ends RK45 with a step-size failure that hides the cause, reports success
    from LSODA on NaN or None and loops without end in LSODA on inf; the delegation checks the
    values and names the time."""
    def fun(t, y):
        if value is None:
            return None if t > 0.5 else np.ones_like(y)
        return np.full_like(y, value if t > 0.5 else 1.0)

    with pytest.raises(error, match="`fun` returned"):
        rotode.solve_ivp(fun, (0, 1), [1.0, 2.0], method=method)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")      # (SciPy's own run meets the value)
@pytest.mark.parametrize("method", ["RK23", "RK45", "DOP853", "Radau", "BDF", "LSODA",
                                    scipy.integrate.RK45, scipy.integrate.BDF])
@pytest.mark.parametrize("value, error", [(None, TypeError), (np.nan, ValueError),
                                          (np.inf, ValueError)])
@pytest.mark.parametrize("t_bad", [-1.0, 0.5], ids=["from t0", "later"])
def test_every_scipy_method_names_a_bad_value(method, value, error, t_bad):
    """RK23/RK45/DOP853/Radau/BDF run `fun` unchecked (SciPy's speed) and, when the run fails,
    once more with every value checked; SciPy itself loops without end on NaN at t0 (RK45),
    ends with a step-size failure (RK, Radau) or raises an unrelated error (BDF, Radau)."""
    calls = []

    def fun(t, y):
        calls.append(t)
        if t > t_bad:
            return None if value is None else np.full_like(y, value)
        return -y

    with pytest.raises(error, match=r"`fun` returned (None|non-finite values) at t = "
                                    r"[0-9.e-]+[:;]"):
        rotode.solve_ivp(fun, (0, 1), [1.0, 2.0], method=method)


def test_a_failure_that_is_not_a_bad_value_keeps_scipy_s_result():
    def fun(t, y):                   # y' = y^2 blows up at t = 1: a genuine step-size failure
        return y * y

    ours = rotode.solve_ivp(fun, (0, 2), [1.0], method="RK45")
    theirs = scipy.integrate.solve_ivp(fun, (0, 2), [1.0], method="RK45")
    assert ours.status == theirs.status == -1 and ours.message == theirs.message
    np.testing.assert_array_equal(ours.y, theirs.y)


def test_an_exception_of_fun_is_re_raised_as_it_is():
    def fun(t, y):
        if t > 0.5:
            raise KeyError("from fun")
        return -y

    with pytest.raises(KeyError, match="from fun"):
        rotode.solve_ivp(fun, (0, 1), [1.0], method="BDF")


def test_checked_python_fun_gives_scipy_s_numbers():
    def fun(t, y, a):
        return -a * y

    ours = rotode.solve_ivp(fun, (0, 3), [1.0, 2.0], method="Radau", args=(0.7,),
                            dense_output=True)
    theirs = scipy.integrate.solve_ivp(fun, (0, 3), [1.0, 2.0], method="Radau", args=(0.7,),
                                       dense_output=True)
    np.testing.assert_array_equal(ours.y, theirs.y)
    assert ours.nfev == theirs.nfev


def test_every_result_is_scipys_oderesult_and_rotodes():
    """What `solve_ivp` is annotated to return holds on both paths, and SciPy's class too."""
    from scipy.integrate._ivp.ivp import OdeResult as ScipyOdeResult

    top = rotode.RigidBody([1, 1, 0.5])
    compiled = rotode.solve_ivp(top, (0, 1), [1, 0, 0, 0, 1.5, 0, 1], method="DOP853")
    in_scipy = rotode.solve_ivp(lambda t, y: -y, (0, 1), [1.0], method="RK23")
    same = scipy.integrate.solve_ivp(lambda t, y: -y, (0, 1), [1.0], method="RK23")
    for sol in (compiled, in_scipy):
        assert isinstance(sol, rotode.ivp.OdeResult) and isinstance(sol, ScipyOdeResult)
    np.testing.assert_array_equal(in_scipy.y, same.y)
    assert in_scipy.keys() == same.keys()
