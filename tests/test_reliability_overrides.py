"""Regression tests for defects 3, 4 and 11 of the reliability issue: Python subclasses that
override ``__call__`` (of a model, `rotode.RigidBody` / `rotode.QuaternionKinematics`, or of a
compiled source, `rotode.omega` / `rotode.torque`) are honoured or refused with a TypeError,
never silently replaced by the compiled base; a ``w(t)``, torque or force callable returning
complex values is a TypeError naming the callable, never a ComplexWarning and a dropped
imaginary part.

Expected values are closed forms: a symmetric body spinning about a principal axis under the
damping torque ``-c I w`` keeps its axis and ``w_x(t) = w0 exp(-c t)``; a rotation about a fixed
axis at the rate ``w(t) = [f(t), 0, 0]`` turns by ``int_0^t f``; SciPy's own ``solve_ivp`` on
the same object is the reference of ``rotode.solve_ivp``.  Each test named ``test_3_``,
``test_4_`` or ``test_11_`` failed on the commit before the fix; the ``test_kept_`` ones guard
what the fix must not change (they passed before and after).
"""
import math
import warnings

import numpy as np
import pytest
import scipy.integrate

import rotode
from rotode import omega, torque
from rotode.ivp import OdeResult as CompiledResult

C = 0.5                                  # damping rate (1/s)
I_SYM = np.array([2.0, 1.0, 1.0])        # symmetric about x: a spin about x stays about x
Y_SPIN = np.array([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0])   # spin 1 rad/s about body x
TOL = dict(rtol=1e-10, atol=1e-12)


def _angle(q):
    """The rotation angle of unit quaternion(s) q (..., 4), in [0, 2 pi)."""
    q = np.asarray(q)
    return 2.0 * np.arctan2(np.linalg.norm(q[..., 1:], axis=-1), q[..., 0])


# ---- the subclasses of the issue -----------------------------------------------------------

class DampedBody(rotode.RigidBody):
    """A rigid body with the damping torque -c I w added in Python."""

    def __call__(self, t, y):
        dy = super().__call__(t, y)
        dy[4:] -= C * np.asarray(y)[4:]
        return dy


class FastKinematics(rotode.QuaternionKinematics):
    """Quaternion kinematics at twice the rate of its source."""

    def __call__(self, t, y):
        return 2.0 * super().__call__(t, y)


class Ramp(omega.Constant):
    """The constant's vector times t: a ramp rate w(t) = w t."""

    def __call__(self, t):
        return self.w * t


class Cosine(omega.Sinusoid):
    """w(t) = [cos t, 0, 0], with its derivative, whatever the Sinusoid's parameters."""

    calls = 0

    def __call__(self, t):
        return np.array([math.cos(t), 0.0, 0.0])

    def derivative(self, t):
        Cosine.calls += 1
        return np.array([-math.sin(t), 0.0, 0.0])


class Linear(omega.AngularVelocity):
    """A Python subclass of the abstract source: w(t) = [t, 0, 0]."""

    def __call__(self, t):
        return np.array([t, 0.0, 0.0])


class ZeroTorque(torque.Constant):
    """A constant torque overridden to zero."""

    def __call__(self, t, q, w):
        return np.zeros(3)


class Damping(torque.Torque):
    """The damping torque -c I w of the body I_SYM, as a Python subclass of the base class."""

    def __call__(self, t, q, w):
        return -C * I_SYM * np.asarray(w)


class DampedGravity(torque.Gravity):
    """Gravity overridden by damping (the override decides, whatever the base computes)."""

    def __call__(self, t, q, w):
        return -C * I_SYM * np.asarray(w)


# ---- defect 3: models overriding __call__ ---------------------------------------------------

@pytest.mark.parametrize("method", ["DOP853", "RK45"])
def test_3_solve_ivp_runs_an_overriding_rigid_body_in_scipy(method):
    body = DampedBody(I_SYM)
    kw = dict(method=method, t_eval=[0.5, 1.0, 2.0], dense_output=True, **TOL)
    sol = rotode.solve_ivp(body, (0.0, 2.0), Y_SPIN, **kw)
    ref = scipy.integrate.solve_ivp(body, (0.0, 2.0), Y_SPIN, **kw)
    assert sol.y[4, -1] == pytest.approx(math.exp(-C * 2.0), rel=1e-8)   # 0.36788, not 1.0
    np.testing.assert_allclose(sol.y[4], np.exp(-C * sol.t), rtol=1e-8)
    np.testing.assert_array_equal(sol.t, ref.t)
    np.testing.assert_array_equal(sol.y, ref.y)
    np.testing.assert_array_equal(sol.sol(1.3), ref.sol(1.3))
    assert sol.nfev == ref.nfev


def test_3_solve_ivp_runs_an_overriding_kinematics_in_scipy():
    model = FastKinematics([0.0, 0.0, 1.0])
    q0 = [1.0, 0.0, 0.0, 0.0]
    sol = rotode.solve_ivp(model, (0.0, 1.0), q0, method="DOP853", **TOL)
    ref = scipy.integrate.solve_ivp(model, (0.0, 1.0), q0, method="DOP853", **TOL)
    np.testing.assert_allclose(sol.y[:, -1], [math.cos(1.0), 0, 0, math.sin(1.0)], atol=1e-9)
    np.testing.assert_array_equal(sol.y, ref.y)


def test_3_solve_ivp_overriding_body_with_events_as_scipy():
    body = DampedBody(I_SYM)
    def ev(t, y):
        return y[4] - 0.5
    ev.terminal = True
    sol = rotode.solve_ivp(body, (0.0, 5.0), Y_SPIN, method="DOP853", events=ev, **TOL)
    assert sol.status == 1
    assert sol.t_events[0][0] == pytest.approx(math.log(2.0) / C, rel=1e-8)


@pytest.mark.parametrize("method", ["rk4", "dop853", "implicit_midpoint"])
def test_3_integrate_refuses_an_overriding_rigid_body(method):
    kw = dict(dt=0.01) if method != "dop853" else TOL
    with pytest.raises(TypeError, match=r"`model`.*DampedBody.*RigidBody.*`__call__`.*"
                                        r"rotode\.solve_ivp.*torque"):
        rotode.integrate(DampedBody(I_SYM), (0.0, 2.0), Y_SPIN, method=method, **kw)


def test_3_integrate_refuses_an_overriding_body_in_a_list_or_batch():
    bodies = [rotode.RigidBody(I_SYM), DampedBody(I_SYM), rotode.RigidBody(I_SYM)]
    with pytest.raises(TypeError, match=r"`model\[1\]`.*DampedBody"):
        rotode.integrate(bodies, (0.0, 1.0), np.tile(Y_SPIN, (3, 1)), method="rk4", dt=0.1)
    per_body = DampedBody(np.tile(I_SYM, (4, 1)))        # (4, 3): one inertia per body
    with pytest.raises(TypeError, match=r"`model`.*DampedBody"):
        rotode.integrate(per_body, (0.0, 1.0), np.tile(Y_SPIN, (4, 1)), method="rk4", dt=0.1)


def test_3_integrate_refuses_an_overriding_kinematics():
    with pytest.raises(TypeError, match=r"`model`.*FastKinematics.*QuaternionKinematics.*"
                                        r"`__call__`.*w\(t\)"):
        rotode.integrate(FastKinematics([0.0, 0.0, 1.0]), (0.0, 1.0), [1.0, 0, 0, 0],
                         method="magnus4", dt=0.1)


def test_3_solver_classes_refuse_an_overriding_body_and_honour_kinematics():
    with pytest.raises(TypeError, match=r"`fun`.*DampedBody.*`__call__`"):
        scipy.integrate.solve_ivp(DampedBody(I_SYM), (0.0, 1.0), Y_SPIN, method=rotode.RK4,
                                  step=0.1)
    # kinematics: the solver class recovers w(t) from the override, as from any callable
    sol = scipy.integrate.solve_ivp(FastKinematics([0.0, 0.0, 1.0]), (0.0, 1.0),
                                    [1.0, 0, 0, 0], method=rotode.Magnus4, step=0.1)
    np.testing.assert_allclose(sol.y[:, -1], [math.cos(1.0), 0, 0, math.sin(1.0)], atol=1e-12)


def test_3_dask_path_refuses_an_overriding_per_body_model():
    da = pytest.importorskip("dask.array")
    body = DampedBody(da.from_array(np.tile(I_SYM, (4, 1)), chunks=2))
    with pytest.raises(TypeError, match=r"`model`.*DampedBody"):
        rotode.integrate(body, (0.0, 1.0), np.tile(Y_SPIN, (4, 1)), method="rk4", dt=0.1)


# ---- defect 4: sources overriding __call__ --------------------------------------------------

@pytest.mark.parametrize("method, kw", [("magnus4", dict(dt=0.1)), ("rk4", dict(dt=0.01)),
                                        ("exp2", dict(dt=0.01)), ("rkmk5", TOL)])
def test_4_integrate_honours_an_overriding_rate(method, kw):
    res = rotode.integrate(Ramp([0.5, 0.0, 0.0]), (0.0, 1.0), [1.0, 0, 0, 0], method=method,
                           **kw)
    # w = 0.5 t about x: the angle is 0.25 t^2 (the compiled Constant would give 0.5)
    assert _angle(res.q[-1]) == pytest.approx(0.25, abs=1e-6)
    assert res.q[-1][1] > 0


def test_4_integrate_honours_an_overriding_rate_in_a_batch_and_a_model():
    q0 = np.tile([1.0, 0, 0, 0], (5, 1))
    res = rotode.integrate(Ramp([0.5, 0.0, 0.0]), (0.0, 1.0), q0, method="magnus4", dt=0.1,
                           workers=2)
    np.testing.assert_allclose(_angle(res.q[:, -1]), 0.25, atol=1e-12)
    model = rotode.QuaternionKinematics(Ramp([0.5, 0.0, 0.0]))
    res = rotode.integrate(model, (0.0, 1.0), q0, method="magnus4", dt=0.1)
    np.testing.assert_allclose(_angle(res.q[:, -1]), 0.25, atol=1e-12)
    # the compiled path of rotode.solve_ivp evaluates the override too, as SciPy does
    sol = rotode.solve_ivp(model, (0.0, 1.0), [1.0, 0, 0, 0], method="DOP853", **TOL)
    ref = scipy.integrate.solve_ivp(model, (0.0, 1.0), [1.0, 0, 0, 0], method="DOP853", **TOL)
    assert _angle(sol.y[:, -1]) == pytest.approx(0.25, abs=1e-9)
    np.testing.assert_allclose(sol.y[:, -1], ref.y[:, -1], atol=1e-12)


def test_4_sinusoid_and_base_subclasses_and_their_derivative():
    Cosine.calls = 0
    src = Cosine(amplitude=3.0, rate=2.0)
    same = omega.Sinusoid([1.0, 0.0, 0.0], 1.0, math.pi / 2)     # cos t, compiled
    for method in ("magnus4", "exp2", "magnus_ca"):
        res = rotode.integrate(src, (0.0, 1.0), [1.0, 0, 0, 0], method=method, dt=0.01)
        assert _angle(res.q[-1]) == pytest.approx(math.sin(1.0), abs=1e-4), method
        ref = rotode.integrate(same, (0.0, 1.0), [1.0, 0, 0, 0], method=method, dt=0.01)
        np.testing.assert_allclose(res.q, ref.q, rtol=0, atol=1e-14)
    assert Cosine.calls > 0                  # exp2 / magnus_ca read w' from `derivative`
    res = rotode.integrate(Linear(), (0.0, 1.0), [1.0, 0, 0, 0], method="magnus4", dt=0.1)
    assert _angle(res.q[-1]) == pytest.approx(0.5, abs=1e-12)


def test_4_samples_override_keeps_its_sample_times():
    class Doubled(omega.Samples):
        def __call__(self, t):
            return 2.0 * super().__call__(t)

    ts = np.linspace(0.0, 1.0, 11)
    src = Doubled(ts, np.tile([0.3, 0.0, 0.0], (11, 1)))
    res = rotode.integrate(src, (0.0, 1.0), [1.0, 0, 0, 0], method="magnus4", dt="samples")
    np.testing.assert_array_equal(res.t, ts)
    assert _angle(res.q[-1]) == pytest.approx(0.6, abs=1e-12)     # 2 * 0.3 rad/s for 1 s


@pytest.mark.parametrize("method, kw", [("rk4", dict(dt=0.01)), ("dop853", TOL),
                                        ("implicit_midpoint", dict(dt=0.01))])
def test_4_zero_torque_override_leaves_the_body_at_rest(method, kw):
    body = rotode.RigidBody([1.0, 2.0, 3.0], torque=ZeroTorque([1.0, 0.5, 0.0]))
    y0 = np.array([1.0, 0, 0, 0, 0.0, 0.0, 0.0])
    res = rotode.integrate(body, (0.0, 2.0), y0, method=method, **kw)
    np.testing.assert_array_equal(res.y[-1], y0)


@pytest.mark.parametrize("src", [Damping(), DampedGravity(1.0, 9.81, [0.0, 0.0, 0.3])])
@pytest.mark.parametrize("method, kw", [("rk4", dict(dt=0.01)), ("dop853", TOL),
                                        ("rkmk5", TOL), ("implicit_midpoint", dict(dt=0.01))])
def test_4_damping_torque_override_damps_the_spin(src, method, kw):
    body = rotode.RigidBody(I_SYM, torque=src)
    y0 = np.tile(Y_SPIN, (3, 1))
    res = rotode.integrate(body, (0.0, 2.0), y0, method=method, workers=2, **kw)
    np.testing.assert_allclose(res.w[:, -1, 0], math.exp(-C * 2.0), rtol=1e-4)
    np.testing.assert_allclose(res.w[:, -1, 1:], 0.0, atol=1e-12)


def test_4_torque_override_in_solve_ivp_and_the_right_hand_side():
    body = rotode.RigidBody(I_SYM, torque=DampedGravity(1.0, 9.81, [0.0, 0.0, 0.3]))
    np.testing.assert_array_equal(body(0.0, Y_SPIN)[4:], [-C, 0.0, 0.0])
    sol = rotode.solve_ivp(body, (0.0, 2.0), Y_SPIN, method="DOP853", **TOL)
    assert isinstance(sol, CompiledResult)
    assert sol.y[4, -1] == pytest.approx(math.exp(-C * 2.0), rel=1e-8)
    ref = scipy.integrate.solve_ivp(body, (0.0, 2.0), Y_SPIN, method="DOP853", **TOL)
    assert ref.y[4, -1] == pytest.approx(math.exp(-C * 2.0), rel=1e-8)


def test_4_per_body_overriding_torque_is_refused():
    with pytest.raises(TypeError, match=r"`torque`.*ZeroTorque.*`__call__`.*per-body"):
        rotode.RigidBody(I_SYM, torque=ZeroTorque(np.ones((3, 3))))


# ---- defect 11: complex values from callables -----------------------------------------------

def _no_complex_warning(call, match):
    with warnings.catch_warnings():
        warnings.simplefilter("error")       # a ComplexWarning would fail the test
        with pytest.raises(TypeError, match=match):
            call()


def complex_rate(t):
    return np.array([1.0 + 0.5j, 0.0, 0.0])


def complex_torque(t, q, w):
    return np.array([0.1j, 0.0, 0.0])


@pytest.mark.parametrize("n", [None, 3])
def test_11_complex_rate_is_a_type_error_naming_the_callable(n):
    q0 = [1.0, 0, 0, 0] if n is None else np.tile([1.0, 0, 0, 0], (n, 1))
    match = r"angular-velocity callable .*complex_rate.* returned complex values"
    _no_complex_warning(lambda: rotode.integrate(complex_rate, (0.0, 1.0), q0,
                                                 method="rk4", dt=0.1, workers=2), match)
    _no_complex_warning(lambda: omega.Callable(complex_rate)(0.0), match)
    model = rotode.QuaternionKinematics(complex_rate)
    if n is None:
        _no_complex_warning(lambda: rotode.solve_ivp(model, (0.0, 1.0), q0, method="RK45"),
                            match)


@pytest.mark.parametrize("n", [None, 3])
def test_11_complex_torque_is_a_type_error_naming_the_callable(n):
    body = rotode.RigidBody(I_SYM, torque=complex_torque)
    y0 = Y_SPIN if n is None else np.tile(Y_SPIN, (n, 1))
    match = r"torque callable .*complex_torque.* returned complex values"
    for method, kw in [("rk4", dict(dt=0.1)), ("dop853", TOL), ("implicit_midpoint",
                                                                 dict(dt=0.1))]:
        _no_complex_warning(lambda m=method, kw=kw: rotode.integrate(
            body, (0.0, 1.0), y0, method=m, workers=2, **kw), match)
    _no_complex_warning(lambda: body(0.0, Y_SPIN), match)
    _no_complex_warning(lambda: rotode.solve_ivp(body, (0.0, 1.0), Y_SPIN, method="DOP853"),
                        match)


def test_11_complex_values_of_an_overriding_source_and_a_force():
    class ComplexRamp(omega.Constant):
        def __call__(self, t):
            return self.w * (1.0 + 1j) * t

    _no_complex_warning(lambda: rotode.integrate(ComplexRamp([1.0, 0, 0]), (0.0, 1.0),
                                                 [1.0, 0, 0, 0], method="rk4", dt=0.1),
                        r"ComplexRamp.* returned complex values")
    body = rotode.RigidBody(I_SYM)
    y0 = np.r_[Y_SPIN, np.zeros(6)]
    _no_complex_warning(lambda: rotode.integrate(
        body, (0.0, 1.0), y0, method="rkn4", dt=0.1, mass=1.0,
        force=lambda t, x, v: np.array([1j, 0.0, 0.0])),
        r"force callable .*<lambda>.* returned complex values")


def test_11_complex_kinematics_in_a_solver_class():
    def fun(t, q):
        return 0.5j * np.asarray(q)

    _no_complex_warning(lambda: scipy.integrate.solve_ivp(
        fun, (0.0, 1.0), [1.0, 0, 0, 0], method=rotode.Magnus4, step=0.1),
        r"`fun` returned complex values")


def test_11_complex_force_of_a_moving_frame():
    from rotode import frames
    A = frames.DynamicTransform([0.0, 0.0, 0.0], np.eye(3), 2.0)
    particle = frames.MovingFrameParticle(A, force=lambda t, x, v: 1j * np.ones(3))
    _no_complex_warning(lambda: particle(0.1, np.ones(6)),
                        r"`force` callable returned complex values")


# ---- kept: subclasses that do not override __call__ keep the compiled path ------------------

class Tagged(rotode.RigidBody):
    """Overrides other methods only."""

    label = "tagged"

    def energy(self, y):
        return 2.0 * super().energy(y)

    def jac(self, t, y):
        return super().jac(t, y)


class TaggedKinematics(rotode.QuaternionKinematics):
    def describe(self):
        return "kinematics"


class Scaled(omega.Sinusoid):
    """A source subclass overriding nothing that rotode evaluates."""

    def describe(self):
        return "scaled"


def test_kept_non_overriding_subclasses_run_compiled_bit_for_bit():
    top = torque.Gravity(1.0, 1.0, [0.0, 0.0, 1.0])
    y0 = np.array([1.0, 0, 0, 0, 1.5, 0.0, 1.0])
    base, sub = rotode.RigidBody([1, 1, 0.5], torque=top), Tagged([1, 1, 0.5], torque=top)
    for method in ("DOP853", "RK45"):
        a = rotode.solve_ivp(base, (0.0, 3.0), y0, method=method, **TOL)
        b = rotode.solve_ivp(sub, (0.0, 3.0), y0, method=method, **TOL)
        assert isinstance(b, CompiledResult)           # the compiled loop, not SciPy's
        np.testing.assert_array_equal(a.y, b.y)
        assert a.nfev == b.nfev
    for method, kw in [("rk4", dict(dt=0.01)), ("dop853", TOL), ("implicit_midpoint",
                                                                 dict(dt=0.01))]:
        a = rotode.integrate(base, (0.0, 3.0), y0, method=method, **kw)
        b = rotode.integrate(sub, (0.0, 3.0), y0, method=method, **kw)
        np.testing.assert_array_equal(a.y, b.y)
    assert sub.energy(y0) == 2.0 * base.energy(y0)
    w = omega.Sinusoid(1.0, 2.0, [0.0, 1.0, 2.0])
    s = Scaled(1.0, 2.0, [0.0, 1.0, 2.0])
    a = rotode.integrate(w, (0.0, 2.0), [1.0, 0, 0, 0], method="exp2", dt=0.01)
    b = rotode.integrate(s, (0.0, 2.0), [1.0, 0, 0, 0], method="exp2", dt=0.01)
    np.testing.assert_array_equal(a.y, b.y)
    assert rotode.QuaternionKinematics(s).omega is s          # not wrapped
    a = rotode.integrate(rotode.QuaternionKinematics(w), (0.0, 2.0), [1.0, 0, 0, 0],
                         method="magnus4", dt=0.01)
    b = rotode.integrate(TaggedKinematics(s), (0.0, 2.0), [1.0, 0, 0, 0],
                         method="magnus4", dt=0.01)
    np.testing.assert_array_equal(a.y, b.y)


def test_kept_overriding_gravity_keeps_its_potential_energy():
    g = DampedGravity(1.0, 9.81, [0.0, 0.0, 0.3])
    y = np.array([0.9, 0.1, -0.3, 0.3, 0.1, 0.2, 0.3])
    plain = rotode.RigidBody(I_SYM, torque=torque.Gravity(1.0, 9.81, [0.0, 0.0, 0.3]))
    assert rotode.RigidBody(I_SYM, torque=g).energy(y) == plain.energy(y)
