"""rotode.ODE: a user's equations with quaternion blocks, run by the generic methods.

References: closed forms (a constant body rate: q(t) = q0 exp(w t / 2)), the built-in rigid
body (the same equations written by the user give its results), orders as slopes with fixed
steps, tolerance proportionality, the unit norm of the blocks, and every failure path.
"""
import ctypes

import c_library
import numpy as np
import pytest
from scipy import LowLevelCallable

import rotode

W = np.array([0.3, -0.4, 1.1])            # a constant body rate


def spin(t, y):
    """[q, x] with q' = 1/2 q (0, W) and x' = W (the rotation vector's integral)."""
    q = y[:4]
    dq = 0.5 * np.array([-q[1:] @ W, *(q[0] * W + np.cross(q[1:], W))])
    return np.concatenate([dq, W])


def spin_exact(t, q0=(1.0, 0.0, 0.0, 0.0)):
    a = np.linalg.norm(W) * t / 2
    e = np.array([np.cos(a), *(np.sin(a) * W / np.linalg.norm(W))])
    q0 = np.asarray(q0)
    q = np.array([q0[0] * e[0] - q0[1:] @ e[1:],
                  *(q0[0] * e[1:] + e[0] * q0[1:] + np.cross(q0[1:], e[1:]))])
    return np.concatenate([q, W * t])


TOP = rotode.RigidBody([1.0, 1.0, 0.5], torque=rotode.torque.Gravity(1.0, 1.0, [0, 0, 1]))
Y_TOP = np.array([1.0, 0.0, 0.0, 0.0, 1.5, 0.0, 1.0])

C_SOURCE = r"""
#include <math.h>
/* the upright Lagrange top of tests/test_ode.py (TOP): q' = q (0, w) / 2, Euler's equations
   with tau = m g com x R(q)^T (-e_z), com = (0, 0, p[0]) (p[0] = 1 for TOP) */
int top(double t, const double* y, double* dy, const double* p) {
    double q0 = y[0], q1 = y[1], q2 = y[2], q3 = y[3], w0 = y[4], w1 = y[5], w2 = y[6];
    double h = p ? p[0] : 1.0;
    double n2 = q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3;
    double dx = -2.0 * (q1 * q3 - q0 * q2) / n2, dyy = -2.0 * (q2 * q3 + q0 * q1) / n2;
    dy[0] = 0.5 * (-q1 * w0 - q2 * w1 - q3 * w2);
    dy[1] = 0.5 * (q0 * w0 + q2 * w2 - q3 * w1);
    dy[2] = 0.5 * (q0 * w1 - q1 * w2 + q3 * w0);
    dy[3] = 0.5 * (q0 * w2 + q1 * w1 - q2 * w0);
    dy[4] = (-h * dyy - (w1 * 0.5 * w2 - w2 * 1.0 * w1)) / 1.0;
    dy[5] = (h * dx - (w2 * 1.0 * w0 - w0 * 0.5 * w2)) / 1.0;
    dy[6] = -(w0 * 1.0 * w1 - w1 * 1.0 * w0) / 0.5;
    return 0;
}
/* fails from t = p[1] on when p[1] > 0: nonzero (p[2] == 0) or NaN (p[2] == 1) */
int top_failing(double t, const double* y, double* dy, const double* p) {
    top(t, y, dy, p);
    if (p[1] > 0.0 && t >= p[1]) {
        if (p[2] == 0.0) return 7;
        dy[4] = NAN;
    }
    return 0;
}
int wrong(double t, const double* y) { return 0; }
"""


@pytest.fixture(scope="module")
def clib(tmp_path_factory):
    return c_library.build(tmp_path_factory.mktemp("odec"), C_SOURCE, ("top", "top_failing"), 3)


# ---- closed forms, orders, tolerances ------------------------------------------------------

@pytest.mark.parametrize("method", rotode.methods.names("ode"))
def test_constant_rate_matches_the_closed_form(method):
    model = rotode.ODE(spin, n=7, quaternions=[0])
    q0 = np.array([0.5, 0.5, -0.5, 0.5])
    y0 = np.concatenate([q0, np.zeros(3)])
    kw = (dict(dt=1e-3) if not rotode.methods.get(method).adaptive
          else dict(rtol=1e-10, atol=1e-12))
    res = rotode.integrate(model, (0, 3), y0, method=method, t_eval=[1.0, 3.0], **kw)
    assert res.success
    want = np.array([spin_exact(t, q0) for t in res.t])
    assert np.abs(res.y - want).max() < 1e-8
    assert res.q.shape == (2, 4) and res.w is None and res.quaternions == (0,)


def _fixed_error(method, dt):
    model = rotode.ODE(spin, n=7, quaternions=[0])
    y0 = np.array([1.0, 0, 0, 0, 0, 0, 0])
    res = rotode.integrate(model, (0, 4), y0, method=method, dt=dt)
    return np.abs(res.y[-1] - spin_exact(4.0)).max()


def _top_error(method, dt, ref):
    model = rotode.ODE(lambda t, y: TOP(t, y), n=7, quaternions=[0])
    res = rotode.integrate(model, (0, 2), Y_TOP, method=method, dt=dt)
    return np.abs(res.y[-1] - ref).max()


@pytest.mark.parametrize("method, order", [("rk3", 3), ("rk4", 4), ("ab3", 3), ("rkmk5", 5),
                                           ("rkmk8", 8)])
def test_order_is_the_slope_with_fixed_steps(method, order):
    ref = rotode.integrate(TOP, (0, 2), Y_TOP, method="rkmk8", rtol=1e-13, atol=1e-15).y[-1]
    dts = [0.1, 0.05, 0.025] if order < 8 else [0.4, 0.2, 0.1]
    errs = [_top_error(method, dt, ref) for dt in dts]
    slope = np.polyfit(np.log(dts), np.log(errs), 1)[0]
    assert abs(slope - order) < 0.35, (slope, errs)


@pytest.mark.parametrize("method", ["bs3", "dopri5", "dop853", "rkmk3", "rkmk5", "rkmk8"])
def test_error_is_proportional_to_the_tolerance(method):
    # the range, rtol 1e-4 .. 1e-12 (atol = rtol / 100); the reference: the built-in
    # model (not the ODE) at rtol 1e-13
    ref = rotode.integrate(TOP, (0, 5), Y_TOP, method="rkmk8", rtol=1e-13, atol=1e-15).y[-1]
    model = rotode.ODE(lambda t, y: TOP(t, y), n=7, quaternions=[0])
    rtols = [1e-4, 1e-6, 1e-8, 1e-10, 1e-12]
    errs = [np.abs(rotode.integrate(model, (0, 5), Y_TOP, method=method, rtol=r,
                                    atol=r / 100).y[-1] - ref).max() for r in rtols]
    slope = np.polyfit(np.log10(rtols), np.log10(errs), 1)[0]
    assert 0.7 <= slope <= 1.3, (slope, errs)


def test_group_methods_keep_every_block_unit_without_normalising():
    def two(t, y):                          # two independent spinning blocks and their rates
        return np.concatenate([spin(t, y[:4] )[:4], spin(t, y[4:8])[:4] * 2.0, [1.0]])
    model = rotode.ODE(two, n=9, quaternions=[0, 4])
    y0 = np.array([1.0, 0, 0, 0, 0, 1.0, 0, 0, 0])
    res = rotode.integrate(model, (0, 500), y0, method="rkmk8", rtol=1e-8, atol=1e-10)
    assert res.q.shape[-2:] == (2, 4)
    assert np.abs(np.linalg.norm(res.q, axis=-1) - 1).max() < 5e-15
    res = rotode.integrate(model, (0, 50), y0, method="dop853", rtol=1e-6, atol=1e-8,
                           normalize=False)
    assert np.abs(np.linalg.norm(res.q[-1], axis=-1) - 1).max() > 1e-12   # drifts as SciPy
    res = rotode.integrate(model, (0, 50), y0, method="dop853", rtol=1e-6, atol=1e-8)
    assert np.abs(np.linalg.norm(res.q[-1], axis=-1) - 1).max() < 1e-15  # projected


@pytest.mark.parametrize("engine", [True, False])
@pytest.mark.parametrize("method", ["rkmk3", "rkmk5", "rkmk8"])
def test_every_block_bounds_a_group_steps_rotation(method, engine, monkeypatch):
    # Two blocks at constant body rates, the second 200 times the first: the pair's estimate
    # finds each step exact, so only the chart's bound (a step turns no block by more than pi,
    # rkmk_max_step_angle) limits the steps; with only the first block checked, a step would
    # turn the second by ~60 rad, past dexp^-1's pole at 2 pi.
    monkeypatch.setattr(rotode.ode, "_USE_ENGINE", engine)
    w1, w2 = np.array([0.0, 0.0, 0.1]), np.array([0.0, 20.0, 0.0])

    def rate(q, w):
        return 0.5 * np.array([-q[1:] @ w, *(q[0] * w + np.cross(q[1:], w))])

    model = rotode.ODE(lambda t, y: np.concatenate([rate(y[:4], w1), rate(y[4:], w2)]),
                       n=8, quaternions=[0, 4])
    y0 = np.array([1.0, 0, 0, 0, 1.0, 0, 0, 0])
    res = rotode.integrate(model, (0, 30), y0, method=method, rtol=1e-8, atol=1e-10)
    assert res.success
    assert res.stats["n_steps"] >= np.ceil(30 * 20.0 / np.pi), res.stats   # 20 h <= pi
    # the exact solution: q_j(T) = exp(w_j T / 2), about z and y
    a1, a2 = 0.1 * 30 / 2, 20.0 * 30 / 2
    want = np.array([np.cos(a1), 0, 0, np.sin(a1), np.cos(a2), 0, np.sin(a2), 0])
    assert np.abs(res.y[-1] - want).max() < 1e-11


# ---- the built-in rigid body, written by the user ---------------------------------------------

def test_the_rigid_body_as_a_python_ode_gives_the_built_in_results():
    model = rotode.ODE(lambda t, y: TOP(t, y), n=7, quaternions=[0])
    a = rotode.integrate(TOP, (0, 10), Y_TOP, method="dop853", rtol=1e-10, atol=1e-12)
    b = rotode.integrate(model, (0, 10), Y_TOP, method="dop853", rtol=1e-10, atol=1e-12,
                         normalize=False)
    np.testing.assert_array_equal(a.y, b.y)             # the same equations, the same bits
    assert a.stats["n_steps"] == b.stats["n_steps"]
    for method in ("rkmk5", "rkmk8", "rk4"):
        kw = dict(dt=0.01) if method == "rk4" else dict(rtol=1e-10, atol=1e-12)
        a = rotode.integrate(TOP, (0, 10), Y_TOP, method=method, **kw)
        b = rotode.integrate(model, (0, 10), Y_TOP, method=method,
                             **(dict(kw, normalize=False) if method == "rk4" else kw))
        assert np.abs(a.y - b.y).max() < 1e-12, method


def test_a_c_function_gives_the_python_ones_bits(clib):
    fun = rotode.ODE(clib.top, n=7, quaternions=[0])
    llc = rotode.ODE(LowLevelCallable(clib.top), n=7, quaternions=[0])
    np.testing.assert_array_equal(fun(0.3, Y_TOP), TOP(0.3, Y_TOP))
    ptr = ctypes.POINTER(ctypes.c_double)

    def through_python(t, y):        # the same C function called from Python: the same bits
        y = np.ascontiguousarray(y)
        dy = np.empty(7)
        assert clib.top(t, y.ctypes.data_as(ptr), dy.ctypes.data_as(ptr), None) == 0
        return dy
    py = rotode.ODE(through_python, n=7, quaternions=[0])
    for method in ("rkmk8", "dopri5"):
        want = rotode.integrate(py, (0, 5), Y_TOP, method=method, rtol=1e-9, atol=1e-11).y
        for model in (fun, llc):
            got = rotode.integrate(model, (0, 5), Y_TOP, method=method, rtol=1e-9,
                                   atol=1e-11).y
            np.testing.assert_array_equal(got, want)


def test_numba_cfunc():
    numba = pytest.importorskip("numba")

    @numba.cfunc(rotode.ODE.signature)
    def f(t, y, dy, p):
        for k in range(4):
            dy[k] = 0.0
        dy[0] = 0.5 * (-y[1] * 0.3 - y[2] * -0.4 - y[3] * 1.1)
        dy[1] = 0.5 * (y[0] * 0.3 + y[2] * 1.1 - y[3] * -0.4)
        dy[2] = 0.5 * (y[0] * -0.4 - y[1] * 1.1 + y[3] * 0.3)
        dy[3] = 0.5 * (y[0] * 1.1 + y[1] * -0.4 - y[2] * 0.3)
        dy[4] = 0.3
        dy[5] = -0.4
        dy[6] = 1.1
        return 0
    model = rotode.ODE(f, n=7, quaternions=[0])
    res = rotode.integrate(model, (0, 3), np.array([1.0, 0, 0, 0, 0, 0, 0]), method="rkmk8",
                           rtol=1e-11, atol=1e-13)
    assert np.abs(res.y[-1] - spin_exact(3.0)).max() < 1e-10
    with pytest.raises(TypeError, match="int f\\(double t"):
        rotode.ODE(numba.njit(lambda t, y: y))


# ---- batches -------------------------------------------------------------------------------

@pytest.mark.parametrize("workers", [1, 2])
def test_per_body_params_each_body_its_single_run(clib, workers):
    P = np.array([[1.0, 0, 0], [0.5, 0, 0], [2.0, 0, 0], [0.1, 0, 0]])
    Y0 = np.tile(Y_TOP, (4, 1))
    Y0[:, 5] = [0.0, 0.1, -0.2, 0.3]
    batch = rotode.integrate(rotode.ODE(clib.top_failing, n=7, quaternions=[0], params=P),
                             (0, 5), Y0, method="rkmk8", rtol=1e-9, atol=1e-11,
                             t_eval=[1.0, 5.0], workers=workers)
    assert batch.success and batch.y.shape == (4, 2, 7)
    for i in range(4):
        one = rotode.integrate(rotode.ODE(clib.top_failing, n=7, quaternions=[0],
                                          params=P[i]), (0, 5), Y0[i], method="rkmk8",
                               rtol=1e-9, atol=1e-11, t_eval=[1.0, 5.0])
        np.testing.assert_array_equal(batch.y[i], one.y)
        assert batch.stats["per_body"]["n_steps"][i] == one.stats["n_steps"]


def test_a_large_state_runs():
    """A chain of 100 free bodies: 400 quaternion and 300 rate states (no size cap)."""
    nb = 100
    inertia = np.linspace(1.0, 2.0, 3 * nb).reshape(nb, 3)

    def chain(t, y):
        q = y[:4 * nb].reshape(nb, 4)
        w = y[4 * nb:].reshape(nb, 3)
        dq = 0.5 * np.column_stack([-(q[:, 1:] * w).sum(1),
                                    q[:, :1] * w + np.cross(q[:, 1:], w)])
        dw = -np.cross(w, inertia * w) / inertia
        return np.concatenate([dq.ravel(), dw.ravel()])
    y0 = np.concatenate([np.tile([1.0, 0, 0, 0], nb), np.tile([0.1, 1.0, 0.2], nb)])
    model = rotode.ODE(chain, n=7 * nb, quaternions=list(range(0, 4 * nb, 4)))
    for method in ("rkmk8", "dop853"):
        res = rotode.integrate(model, (0, 2), y0, method=method, rtol=1e-8, atol=1e-10)
        assert res.success and res.q.shape == (2, nb, 4)
        L0 = (inertia * y0[4 * nb:].reshape(nb, 3))
        Lt = inertia * res.y[-1, 4 * nb:].reshape(nb, 3)
        assert np.abs(np.linalg.norm(Lt, axis=1) - np.linalg.norm(L0, axis=1)).max() < 1e-7


# ---- failures --------------------------------------------------------------------------------

@pytest.mark.parametrize("kind, reason", [(0, "returned a nonzero status"),
                                          (1, "non-finite derivative")])
def test_a_failing_body_of_a_batch_is_reported_the_others_intact(clib, kind, reason):
    N = 1000
    P = np.zeros((N, 3))
    P[:, 0] = 1.0
    P[:, 2] = kind
    P[417, 1] = 2.0                     # body 417 fails from t = 2 on
    Y0 = np.tile(Y_TOP, (N, 1))
    model = rotode.ODE(clib.top_failing, n=7, quaternions=[0], params=P)
    res = rotode.integrate(model, (0, 3), Y0, method="dopri5", rtol=1e-6, atol=1e-8,
                           t_eval=[1.0, 3.0], workers=2)
    assert not res.success and "body 417" in res.message and reason in res.message
    assert np.isnan(res.y[417, 1]).all() and np.isfinite(res.y[417, 0]).all()
    ok = np.delete(np.arange(N), 417)
    assert np.isfinite(res.y[ok]).all()
    np.testing.assert_array_equal(res.y[ok], np.broadcast_to(res.y[0], res.y[ok].shape))


def test_python_errors_are_re_raised_unchanged():
    class Boom(Exception):
        pass

    def bad(t, y):
        if t > 0.5:
            raise Boom("at t > 0.5")
        return spin(t, y)

    def interrupt(t, y):
        if t > 0.5:
            raise KeyboardInterrupt
        return spin(t, y)
    y0 = np.array([1.0, 0, 0, 0, 0, 0, 0])
    with pytest.raises(Boom, match="t > 0.5"):
        rotode.integrate(rotode.ODE(bad, quaternions=[0]), (0, 1), y0, method="rkmk5")
    with pytest.raises(KeyboardInterrupt):
        rotode.integrate(rotode.ODE(interrupt, quaternions=[0]), (0, 1), np.tile(y0, (50, 1)),
                         method="dop853", workers=2)
    with pytest.raises(ValueError, match="must return 7 real values"):
        rotode.integrate(rotode.ODE(lambda t, y: y[:3], quaternions=[0]), (0, 1), y0,
                         method="rk4", dt=0.1)


def test_an_interrupt_in_one_body_of_a_batch_of_1000_reaches_the_caller():
    calls = []

    def interrupt(t, y):                # body 417 (its x starts at 100) interrupts at t > 0.05
        calls.append(t)
        if y[4] > 50.0 and t > 0.05:
            raise KeyboardInterrupt
        return spin(t, y)
    Y0 = np.tile([1.0, 0, 0, 0, 0, 0, 0], (1000, 1))
    model = rotode.ODE(interrupt, quaternions=[0])
    runs = (("dop853", dict(rtol=1e-3)), ("rk4", dict(dt=0.025)))
    full = {}
    for method, kw in runs:            # the batch without it runs through
        calls.clear()
        res = rotode.integrate(model, (0, 0.1), Y0, method=method, workers=2, **kw)
        assert res.success and np.isfinite(res.y).all()
        full[method] = len(calls)
    Y0[417, 4] = 100.0
    for method, kw in runs:
        calls.clear()
        with pytest.raises(KeyboardInterrupt):
            rotode.integrate(model, (0, 0.1), Y0, method=method, workers=2, **kw)
        assert len(calls) < full[method]                # (stopped, not run to the end)


def test_bad_input_is_refused_naming_the_argument(clib):
    y0 = np.array([1.0, 0, 0, 0, 0, 0, 0])
    with pytest.raises(ValueError, match="`quaternions`.*overlap"):
        rotode.ODE(spin, n=8, quaternions=[0, 2])
    with pytest.raises(ValueError, match="`quaternions`.*does not fit"):
        rotode.ODE(spin, n=7, quaternions=[4])
    with pytest.raises(ValueError, match="`quaternions`.*does not fit"):
        rotode.integrate(rotode.ODE(spin, quaternions=[5]), (0, 1), y0, method="rk4", dt=0.1)
    with pytest.raises(TypeError, match="`quaternions` must"):
        rotode.ODE(spin, quaternions="0")
    with pytest.raises(TypeError, match="`quaternions` must hold ints"):
        rotode.ODE(spin, n=8, quaternions=[0.5])                # (not truncated to 0)
    with pytest.raises(ValueError, match="`n` must be a positive int"):
        rotode.ODE(spin, n=0)
    with pytest.raises(ValueError, match="y0 \\(the quaternion block at 0\\).*nonzero|zero"):
        rotode.integrate(rotode.ODE(spin, quaternions=[0]), (0, 1), np.zeros(7),
                         method="rkmk5")
    with pytest.raises(ValueError, match="`y0`"):
        rotode.integrate(rotode.ODE(spin, n=8, quaternions=[0]), (0, 1), y0, method="rkmk5")
    with pytest.raises(ValueError, match="`params` holds 3 per-body rows"):
        rotode.integrate(rotode.ODE(clib.top, n=7, quaternions=[0], params=np.ones((3, 1))),
                         (0, 1), np.tile(Y_TOP, (2, 1)), method="rkmk5")
    with pytest.raises(ValueError, match="`params` must have shape"):
        rotode.ODE(clib.top, n=7, params=np.ones((2, 2, 2)))
    with pytest.raises(TypeError, match="`args` are passed to a Python `fun`"):
        rotode.ODE(clib.top, n=7, args=(1.0,))
    clib.wrong.restype = ctypes.c_int
    clib.wrong.argtypes = [ctypes.c_double, ctypes.POINTER(ctypes.c_double)]
    wrong = LowLevelCallable(clib.wrong)
    with pytest.raises(TypeError, match="int \\(double, const double \\*, double \\*"):
        rotode.ODE(wrong, n=7)
    with pytest.raises(TypeError, match="`fun` must be"):
        rotode.ODE(42, n=7)
    with pytest.raises(TypeError, match="not accepted by the Lie-group method"):
        rotode.integrate(rotode.ODE(spin, quaternions=[0]), (0, 1), y0, method="rkmk5",
                         normalize=True)
    with pytest.raises(ValueError, match="`frame` does not apply"):
        rotode.integrate(rotode.ODE(spin, quaternions=[0]), (0, 1), y0, method="rkmk5",
                         frame="body")
    with pytest.raises(ValueError, match="unknown method 'magnus4' for ode"):
        rotode.integrate(rotode.ODE(spin, quaternions=[0]), (0, 1), y0, method="magnus4",
                         dt=0.1)


def test_ab3_on_a_nonuniform_grid_and_its_blocks():
    """ab3's variable-step weights: a grid refined onto t_eval keeps order 3 accuracy, and
    the block stays unit (projected after every step) or drifts (normalize=False)."""
    model = rotode.ODE(spin, n=7, quaternions=[0])
    y0 = np.array([1.0, 0, 0, 0, 0, 0, 0])
    te = [0.013, 1.0, 1.3333, 2.71]
    res = rotode.integrate(model, (0, 4), y0, method="ab3", dt=0.01, t_eval=te)
    want = np.array([spin_exact(t) for t in te])
    assert np.abs(res.y - want).max() < 1e-6
    assert np.abs(np.linalg.norm(res.q, axis=-1) - 1).max() < 1e-15
    loose = rotode.integrate(model, (0, 4), y0, method="ab3", dt=0.01, normalize=False)
    assert np.abs(np.linalg.norm(loose.q[-1]) - 1) > 1e-12
    batch = rotode.integrate(model, (0, 4), np.tile(y0, (3, 1)), method="ab3", dt=0.01,
                             workers=2)
    np.testing.assert_array_equal(batch.y[1], rotode.integrate(model, (0, 4), y0,
                                                               method="ab3", dt=0.01).y)
