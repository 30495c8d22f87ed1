"""The thin path of a fixed-step call (`rotode._plan.thin_fixed`: `kinematic.run_fixed_single`,
`dynamic.run_fixed_single`, `_driver.thin_grid`): one body with ``dt`` entered straight into
its method's lane kernel, with no general-path set-up; a user's `rotode.ODE` into the driver's
fixed-grid loop (`ode.run_fixed_single`, `_driver.thin_stepper_rows`).

Each call is compared with the same call on the general path (``workers=None`` takes it, as
does a batch of one body): the same grid, rows, angular velocities and stats, to the bit, on
every lane method, both sources, both frames, forwards and backwards, with a last step shorter
than dt, with and without ``save_every``, y0 as an array, list or tuple; and the inputs the
general path refuses still raise its errors (the thin path declines them).  An independent
check: a constant rate's exact orientation.
"""
import signal

import numpy as np
import pytest
from test_driver import ctrl_c_latency
from test_ode_engine import P0, build_duo
from test_ode_engine import Y0 as DUO_Y0

import rotode
from rotode import _lanes, _plan, dynamic, implicit, kinematic, ode

SOURCES = {
    "constant": rotode.omega.Constant([0.3, -1.2, 0.7]),
    "sinusoid": rotode.omega.Sinusoid(amplitude=[1.0, 0.5, -0.8], rate=2.0,
                                      phase=[0.0, 1.0, 2.0]),
}
Q0 = [0.9, 0.1, -0.2, 0.3]
Y0 = [0.9, 0.1, -0.2, 0.3, 1.5, -0.4, 2.0]
TOP = rotode.RigidBody([1.0, 1.2, 0.5], torque=rotode.torque.Gravity(1.3, 9.81, [0.05, -0.02, 0.4]))
BODIES = {"free": rotode.RigidBody([2.0, 1.5, 1.0]), "top": TOP,
          "full": rotode.RigidBody([[2.0, 0.1, -0.05], [0.1, 1.5, 0.2], [-0.05, 0.2, 1.0]],
                                   torque=rotode.torque.Constant([0.1, -0.2, 0.3], frame="world"))}
KIN_METHODS = sorted(kinematic._FIXED_SPECS)      # (the pairs at fixed dt among them)
PAIRS = sorted(dynamic._FIXED_PAIRS)              # (the pairs' fixed-grid lanes: AVX2's)
RIGID_METHODS = sorted(dynamic._FIXED_SPECS) + PAIRS
# (t_span, dt, save_every): dt divides the span, does not (a short last step), backwards, one
# step longer than the span, every third row
GRIDS = [((0.0, 1.0), 0.1, None), ((0.0, 1.05), 0.1, None), ((2.0, -1), 0.125, None),
         ((0, 0.3), 1.0, None), ((0.5, 2.0), 0.01, 3), ((0.0, 1.0), 0.1, 10), ((0, 1), 1, 7)]


def _same(a, b):
    sa, sb = dict(a.stats), dict(b.stats)
    assert "per_body" not in sa
    sb.pop("per_body", None)
    assert sa == sb
    for x, y in ((a.t, b.t), (a.y, b.y), (a.w, b.w)):
        assert x.shape == y.shape
        np.testing.assert_array_equal(x, y)
    assert a.method == b.method and a.success and b.success


def _thin_and_general(model, t_span, y0, method, dt, save_every, **kw):
    fast = _plan.thin_fixed(model, t_span, y0, method, dt, save_every, kw.get("frame"), {})
    # (a pair at fixed dt: in AVX2's lanes alone; elsewhere the general path's driver loop)
    assert (fast is not None) == (method not in PAIRS or _lanes.get() in ("avx2", "avx512")), (
        method, t_span, dt)
    thin = rotode.integrate(model, t_span, y0, method=method, dt=dt, save_every=save_every,
                            **kw)
    general = rotode.integrate(model, t_span, np.asarray(y0, float), method=method, dt=dt,
                               save_every=save_every, workers=None, **kw)
    return thin, general


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("frame", [None, "world"])
@pytest.mark.parametrize("method", KIN_METHODS)
def test_kinematic_thin_call_is_the_general_one(source, frame, method):
    for t_span, dt, every in GRIDS:
        if method == "magnus_ca" and dt > 0.5:     # (beyond its rotation bound: general path)
            continue
        thin, general = _thin_and_general(SOURCES[source], t_span, Q0, method, dt, every,
                                          frame=frame)
        _same(thin, general)


@pytest.mark.parametrize("body", BODIES)
@pytest.mark.parametrize("method", RIGID_METHODS)
def test_rigid_thin_call_is_the_general_one(body, method):
    for t_span, dt, every in GRIDS:
        thin, general = _thin_and_general(BODIES[body], t_span, Y0, method, dt, every)
        _same(thin, general)


IMPLICIT_BODIES = {
    "free": rotode.RigidBody([2.5, 1.4, 1.3]),
    "constant": rotode.RigidBody([2.0, 1.5, 1.0], torque=rotode.torque.Constant([0.1, -0.2, 0.3])),
    "gravity": TOP,
    "gravity gradient": rotode.RigidBody([[2.0, 0.1, 0.0], [0.1, 1.5, 0.2], [0.0, 0.2, 1.0]],
                                         torque=rotode.torque.GravityGradient(
                                             [[2.0, 0.1, 0.0], [0.1, 1.5, 0.2], [0.0, 0.2, 1.0]],
                                             1.1e-3, inclination=0.9)),
}


@pytest.mark.parametrize("body", IMPLICIT_BODIES)
@pytest.mark.parametrize("method", implicit.METHODS)
def test_implicit_thin_call_is_the_general_one(body, method):
    for t_span, dt, every in GRIDS:
        thin, general = _thin_and_general(IMPLICIT_BODIES[body], t_span, Y0, method, dt, every)
        L_thin, L_general = thin.stats.pop("L"), general.stats.pop("L")
        np.testing.assert_array_equal(L_thin, L_general)
        _same(thin, general)


@pytest.mark.parametrize("body", IMPLICIT_BODIES)
def test_rkn4_thin_call_is_the_general_one(body):
    for t_span, dt, every in GRIDS:
        thin, general = _thin_and_general(IMPLICIT_BODIES[body], t_span, Y0, "rkn4", dt, every)
        np.testing.assert_array_equal(thin.stats.pop("qdot"), general.stats.pop("qdot"))
        _same(thin, general)
    for model, opts in [(rotode.RigidBody([1, 2, 3], torque=lambda t, q, w: np.zeros(3)), {}),
                        (rotode.RigidBody([1, 2, 3], gyroscopic=False), {}),
                        (TOP, {"qdot0": [0.0, 0.1, 0.2, 0.3]})]:
        assert _plan.thin_fixed(model, (0, 1), Y0, "rkn4", 0.1, None, None, opts) is None


def test_implicit_thin_path_declines():
    free = IMPLICIT_BODIES["free"]
    for model, opts in [(rotode.RigidBody([1, 2, 3], torque=lambda t, q, w: np.zeros(3)), {}),
                        (rotode.RigidBody([1, 2, 3], gyroscopic=False), {}),
                        (free, {"solver": "fixed-point"}), (free, {"L0": [0.1, 0.2, 0.3]})]:
        assert _plan.thin_fixed(model, (0, 1), Y0, "implicit_midpoint", 0.1, None, None,
                                opts) is None
    assert implicit.run_fixed_single(free, (0, 1), Y0, "rk4", 0.1, None) is None


@pytest.fixture(scope="module")
def duo(tmp_path_factory):
    return build_duo(tmp_path_factory.mktemp("thinfixed"))


@pytest.mark.parametrize("method", sorted(ode._FIXED_SPECS))
@pytest.mark.parametrize("normalize", [None, False])
def test_ode_thin_call_is_the_general_one(duo, method, normalize):
    model = rotode.ODE(duo, n=15, quaternions=[1, 8], params=P0)
    y0 = DUO_Y0.copy()
    y0[1:5] *= 1.2                       # not unit: normalize shows
    opts = {} if normalize is None else {"normalize": normalize}
    for t_span, dt, every in GRIDS:
        fast = _plan.thin_fixed(model, t_span, list(y0), method, dt, every, None, opts)
        assert fast is not None, (method, t_span, dt)
        thin = rotode.integrate(model, t_span, list(y0), method=method, dt=dt,
                                save_every=every, **opts)
        general = rotode.integrate(model, t_span, y0, method=method, dt=dt, save_every=every,
                                   workers=None, **opts)
        sa, sb = dict(thin.stats), dict(general.stats)
        sb.pop("per_body", None)
        assert list(sa.items()) == list(sb.items())
        for x, y in ((thin.t, general.t), (thin.y, general.y)):
            assert x.shape == y.shape
            np.testing.assert_array_equal(x, y)
        assert thin.w is None and general.w is None and thin.quaternions == (1, 8)


def test_ode_failures_and_what_the_thin_path_declines(duo):
    failing = rotode.ODE(duo, n=15, quaternions=[1, 8], params=np.r_[P0[:7], 0.5, 0.0])
    res = rotode.integrate(failing, (0, 1), DUO_Y0, method="rk4", dt=0.1)
    assert not res.success and np.isnan(res.y[-1]).all()
    model = rotode.ODE(duo, n=15, quaternions=[1, 8], params=P0)
    for method, opts, y0 in [("rkmk8", {}, DUO_Y0), ("rk4", {"normalize": 1}, DUO_Y0),
                             ("rk4", {}, DUO_Y0[:14]), ("rk4", {}, np.r_[DUO_Y0[:1], 0, 0, 0, 0,
                                                                       DUO_Y0[5:]])]:
        assert _plan.thin_fixed(model, (0, 1), y0, method, 0.1, None, None, opts) is None
    with pytest.raises(ValueError):
        rotode.integrate(model, (0, 1), DUO_Y0[:14], method="rk4", dt=0.1)
    with pytest.raises(ValueError):
        rotode.integrate(model, (0, 1), np.r_[DUO_Y0[:1], 0, 0, 0, 0, DUO_Y0[5:]],
                         method="rk4", dt=0.1)
    python = rotode.ODE(lambda t, y: np.zeros(15), n=15, quaternions=[1, 8])
    assert _plan.thin_fixed(python, (0, 1), DUO_Y0, "rk4", 0.1, None, None, {}) is None


def test_what_the_thin_path_declines_runs_the_general_path():
    w = SOURCES["sinusoid"]
    q0 = np.array(Q0)
    declined = [
        (w, (0.0, 1.0), q0, "rk4", np.float32(0.1), None, None),   # not a Python number
        (w, (0.0, 1.0), q0, "rk4", 0.1, np.int64(2), None),
        (w, (0.0, 1.0), q0, "RK4", 0.1, None, None),          # the general path's lower()
        (w, (0.0, 1.0), q0.reshape(1, 4), "rk4", 0.1, None, None),
        (w, (0.0, 1.0), [1, 0, 0], "rk4", 0.1, None, None),
        (w, (0.0, 1.0), [1, 0, 0, True], "rk4", 0.1, None, None),
        (w, (0.0, 1.0), q0.astype(np.float32), "rk4", 0.1, None, None),
        (w, (0.0, 1.0), q0, "rk4", 0.1, None, "World"),
        (rotode.QuaternionKinematics(w, norm_gain=0.5), (0.0, 1.0), q0, "rk4", 0.1, None, None),
        (rotode.QuaternionKinematics(w), (0.0, 1.0), q0, "rk4", 0.1, None, "world"),
        (np.array([0.3, np.nan, 0.1]), (0.0, 1.0), q0, "rk4", 0.1, None, None),
        (np.array([0.3, 0.2, 0.1], dtype=np.float32), (0.0, 1.0), q0, "rk4", 0.1, None, None),
        (lambda t: np.ones(3), (0.0, 1.0), q0, "rk4", 0.1, None, None),
        (TOP, (0.0, 1.0), Y0, "rk4", 0.1, None, "body"),
        (rotode.RigidBody([1, 1, 1], torque=lambda t, q, w: np.zeros(3)), (0, 1), Y0, "rk4",
         0.1, None, None),
    ]
    for model, span, y0, method, dt, every, frame in declined:
        assert _plan.thin_fixed(model, span, y0, method, dt, every, frame, {}) is None, method
    assert _plan.thin_fixed(w, (0.0, 1.0), q0, "rk4", 0.1, None, None, {"exp": "approx"}) is None


@pytest.mark.parametrize("kw, error", [
    (dict(dt=0.0), ValueError), (dict(dt=-0.1), ValueError), (dict(dt=float("nan")), ValueError),
    (dict(dt=True), TypeError), (dict(dt=1e-12), ValueError), (dict(save_every=0), ValueError),
    (dict(save_every=True), ValueError), (dict(t_span=(0.0, 0.0)), ValueError),
    (dict(t_span=(0.0, float("inf"))), ValueError), (dict(y0=[0.0, 0, 0, 0]), ValueError),
    (dict(y0=[1.0, float("nan"), 0, 0]), ValueError), (dict(y0=[1e200, 1e200, 0, 0]), ValueError),
    (dict(t_span=(1e16, 1e16 + 64), dt=0.5), ValueError),
])
def test_refused_input_raises_the_general_paths_error(kw, error):
    args = dict(t_span=(0.0, 1.0), y0=Q0, dt=0.1, save_every=None) | kw
    with pytest.raises(error):
        rotode.integrate(SOURCES["constant"], args["t_span"], args["y0"], method="rk4",
                         dt=args["dt"], save_every=args["save_every"])


def test_a_failed_run_reports_as_the_general_path():
    # magnus_ca beyond its rotation bound: the thin run fails, the general path raises
    with pytest.raises(ValueError, match="convergence bound"):
        rotode.integrate(rotode.omega.Constant([3.0, 0, 0]), (0, 2), Q0, method="magnus_ca",
                         dt=1.0)
    # an overflowing rate: NaN rows and the general path's status
    res = rotode.integrate(rotode.omega.Constant([1e308, 1e308, 0]), (0, 1), Q0,
                           method="rk4", dt=0.5)
    assert not res.success


def test_numpy_scalars_and_lists_of_them_take_the_thin_path():
    w = SOURCES["sinusoid"]
    t1, dt = np.float64(1.5), np.float64(0.1)
    assert _plan.thin_fixed(w, (0.0, t1), list(np.array(Q0)), "rk4", dt, None, None, {})
    _same(rotode.integrate(w, (0.0, t1), list(np.array(Q0)), method="rk4", dt=dt),
          rotode.integrate(w, (0.0, t1), Q0, method="rk4", dt=dt, workers=None))


@pytest.mark.parametrize("model, y0, method", [(SOURCES["sinusoid"], Q0, "magnus8"),
                                              (SOURCES["sinusoid"], Q0, "rkmk8"),
                                              (TOP, Y0, "dop853")])
def test_lanes_off_and_every_width_give_the_same_bits(model, y0, method):
    """The thin path on every instruction set, and the lanes off (the general path's driver
    loop: the thin path declines)."""
    ref = rotode.integrate(model, (0, 2), y0, method=method, dt=0.05)
    previous = _lanes.get()
    try:
        for name in _lanes.available():
            _lanes.use(name)
            if name == "off":
                assert _plan.thin_fixed(model, (0, 2), y0, method, 0.05, None, None, {}) is None
            res = rotode.integrate(model, (0, 2), y0, method=method, dt=0.05)
            np.testing.assert_array_equal(res.y, ref.y)
            np.testing.assert_array_equal(res.w, ref.w)
            assert res.stats["nfev"] == ref.stats["nfev"]
    finally:
        _lanes.use(previous)


@pytest.mark.parametrize("method, steps", [("rk4", {"dt": 0.1}), ("magnus8", {"dt": 0.1}),
                                           ("rkmk8", {"dt": 0.1}), ("dop853", {"rtol": 1e-9}),
                                           ("magnus8", {"rtol": 1e-9})])
def test_a_wrapper_and_an_array_take_the_thin_path(method, steps):
    """A `QuaternionKinematics` without a norm gain (its source and frame) and an array of
    shape (3,) (a `Constant`, as `integrate` reads it) take the thin paths, fixed-step and
    error-controlled: the general path's bits and stats."""
    for model, frame in [(rotode.QuaternionKinematics(SOURCES["sinusoid"], frame="world"), None),
                         (rotode.QuaternionKinematics(SOURCES["constant"]), "body"),
                         (np.array([0.3, -1.2, 0.7]), "world")]:
        if "dt" in steps:
            fast = _plan.thin_fixed(model, (0.0, 1.0), Q0, method, steps["dt"], None, frame, {})
        else:
            fast = _plan.thin_run(model, (0.0, 1.0), Q0, method, steps["rtol"], None, frame, {})
        lanes = _lanes.get() in ("avx2", "avx512")    # (a pair given dt: AVX2's lanes)
        assert (fast is not None) == (method not in PAIRS or "dt" not in steps or lanes)
        _same(rotode.integrate(model, (0.0, 1.0), Q0, method=method, frame=frame, **steps),
              rotode.integrate(model, (0.0, 1.0), Q0, method=method, frame=frame,
                               workers=None, **steps))


def test_a_constant_rate_gives_the_exact_orientation():
    w = np.array([0.3, -1.2, 0.7])
    res = rotode.integrate(rotode.omega.Constant(w), (0, 2.5), [1.0, 0, 0, 0], method="magnus4",
                           dt=0.1)
    exact = rotode.quaternion.exp(0.5 * w * res.t[:, None])   # q(t) = exp(w t / 2)
    dots = np.abs(np.sum(res.q * exact, axis=1))
    np.testing.assert_allclose(dots, 1.0, atol=1e-14)


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs POSIX signals")
def test_ctrl_c_stops_a_long_thin_run():
    assert ctrl_c_latency(lambda: rotode.integrate(
        SOURCES["sinusoid"], (0.0, 5e5), Q0, method="magnus8", dt=0.1, save_every=10**9)) < 0.5


# (t_span, dt, t_eval): times on the grid, between its points, near one (moved onto it), t0 and
# tf alone, backwards, one time; a fixed step's rows there
EVAL_GRIDS = [((0.0, 1.0), 0.1, [0.0, 0.3, 0.55, 1.0]),
              ((0.0, 1.05), 0.1, np.linspace(0.0, 1.05, 8)),
              ((0.0, 1.0), 0.1, [0.2 + 1e-12, 0.7]),
              ((2.0, -1.0), 0.125, [2.0, 1.1, -0.3, -1.0]),
              ((0.0, 1.0), 0.25, [0.5])]


@pytest.mark.parametrize("method", ["rk4", "lie_euler", "dop853", "rkmk8", "rkn4", "magnus4",
                                    "implicit_midpoint"])
def test_t_eval_takes_the_thin_path_with_the_general_grid(method):
    kind = "kinematics" if method == "magnus4" else "rigid body"
    model, y0 = (SOURCES["sinusoid"], Q0) if kind == "kinematics" else (TOP, Y0)
    for t_span, dt, t_eval in EVAL_GRIDS:
        fast = _plan.thin_fixed(model, t_span, y0, method, dt, None, None, {}, t_eval)
        assert (fast is not None) == (method not in PAIRS or _lanes.get() in ("avx2", "avx512"))
        thin = rotode.integrate(model, t_span, y0, method=method, dt=dt, t_eval=t_eval)
        general = rotode.integrate(model, t_span, np.asarray(y0, float), method=method, dt=dt,
                                   t_eval=t_eval, workers=None)
        _same_arrays_too(thin, general)
        np.testing.assert_array_equal(thin.t, np.asarray(t_eval, float))
    # (a NumPy dt: the same grid, time_grid's own)
    _same_arrays_too(
        rotode.integrate(model, (0.0, 1.0), y0, method=method, dt=np.float64(0.1),
                         t_eval=[0.5]),
        rotode.integrate(model, (0.0, 1.0), y0, method=method, dt=0.1, t_eval=[0.5],
                         workers=None))


def _same_arrays_too(thin, general):
    """`_same`, the array stats (implicit methods' L, rkn4's qdot) compared apart."""
    for key in ("L", "qdot"):
        np.testing.assert_array_equal(thin.stats.pop(key, 0), general.stats.pop(key, 0))
    _same(thin, general)


def test_t_eval_on_the_thin_path_of_a_users_equations(duo):
    model = rotode.ODE(duo, n=15, quaternions=[1, 8], params=P0)
    for t_span, dt, t_eval in EVAL_GRIDS:
        assert _plan.thin_fixed(model, t_span, DUO_Y0, "rk4", dt, None, None, {},
                                t_eval) is not None
        thin = rotode.integrate(model, t_span, DUO_Y0, method="rk4", dt=dt, t_eval=t_eval)
        general = rotode.integrate(model, t_span, DUO_Y0, method="rk4", dt=dt, t_eval=t_eval,
                                   workers=None)
        sb = dict(general.stats)
        sb.pop("per_body", None)
        assert thin.stats == sb
        np.testing.assert_array_equal(thin.t, general.t)
        np.testing.assert_array_equal(thin.y, general.y)


@pytest.mark.parametrize("t_eval, error", [([0.5, 2.0], ValueError), ([0.5, np.nan], ValueError),
                                           ([[0.5]], ValueError), ("a", (TypeError, ValueError))])
def test_a_refused_t_eval_raises_the_general_paths_error(t_eval, error):
    assert _plan.thin_fixed(TOP, (0.0, 1.0), Y0, "rk4", 0.1, None, None, {}, t_eval) is None
    with pytest.raises(error):
        rotode.integrate(TOP, (0.0, 1.0), Y0, method="rk4", dt=0.1, t_eval=t_eval)
    with pytest.raises(ValueError, match="save_every"):
        rotode.integrate(TOP, (0.0, 1.0), Y0, method="rk4", dt=0.1, t_eval=[0.5], save_every=2)
