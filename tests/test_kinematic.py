"""Native kinematic steppers (rotode.kinematic): orders, exactness, Rucker tables, batching, errors.

References are independent of rotode: solve_ivp DOP853 (rtol 1e-13) on the plain-NumPy
quaternion kinematics of tests/reference.py, and closed forms for constant rates.
"""
from fractions import Fraction
from math import pi

import numpy as np
import pytest
from reference import PHASE, A, B, benchmark_w, conj, qmul, quat_kin
from scipy.integrate import solve_ivp

from rotode import kinematic as K
from rotode import methods
from rotode.omega import Callable, Constant, Sinusoid

SRC = Sinusoid(A, B, PHASE)
ID = np.array([[1.0, 0.0, 0.0, 0.0]])
LIE = ("lie_euler", "exp2", "magnus_ca", "magnus2", "magnus4", "magnus6", "magnus8",
       "cg1", "cg2", "cg3")


def angle(q, ref):
    """Rotation angle (rad) between the rotations of two nonzero quaternions."""
    q = np.asarray(q) / np.linalg.norm(q)
    ref = np.asarray(ref) / np.linalg.norm(ref)
    d = qmul(conj(ref), q)
    return 2.0 * np.arctan2(np.linalg.norm(d[1:]), abs(d[0]))


def reference(T, frame="body", q0=(1.0, 0.0, 0.0, 0.0), w=benchmark_w):
    sol = solve_ivp(lambda t, q: quat_kin(q, w(t), frame), (0.0, T), np.asarray(q0, float),
                    method="DOP853", rtol=1e-13, atol=1e-14)
    return sol.y[:, -1]


@pytest.fixture(scope="module")
def ref10():
    return {f: reference(10.0, f) for f in ("body", "world")}


def final(method, n, T=10.0, frame="body", model=SRC, **opts):
    t = np.linspace(0.0, T, n + 1)
    y, w, st = K.run(method, model, ID, t, np.array([n]), dict(frame=frame, **opts), 1)
    return y[0, 0], st


# (method, ladder of step counts over T = 10 s, expected order, tolerance mode)
LADDERS = [
    ("lie_euler", [100, 200, 400, 800], 1),
    ("exp2", [100, 200, 400, 800], 2),
    ("magnus_ca", [100, 200, 400, 800], 2),
    ("magnus2", [100, 200, 400, 800], 2),
    ("magnus4", [50, 100, 200, 400], 4),
    ("magnus6", [25, 50, 100, 200], 6),
    ("magnus8", [12, 16, 24, 32], 8),
    ("cg1", [100, 200, 400, 800], 1),
    ("cg2", [100, 200, 400, 800], 2),
    ("cg3", [100, 200, 400, 800], 3),
    ("rk3", [50, 100, 200, 400], 3),
    ("rk4", [50, 100, 200, 400], 4),
    ("ab3", [200, 400, 800, 1600], 3),
]


@pytest.mark.parametrize("frame", ["body", "world"])
@pytest.mark.parametrize("method,ns,order", LADDERS)
def test_convergence_order(method, ns, order, frame, ref10):
    errs = [angle(final(method, n, frame=frame)[0], ref10[frame]) for n in ns]
    assert min(errs) > 1e-12, errs  # above the round-off floor: the slope is measurable
    p = np.polyfit(np.log(10.0 / np.asarray(ns)), np.log(errs), 1)[0]
    if method in ("rk3", "ab3"):
        # third order; on this problem they behave like order 4 (Rucker 2018 Fig. 3)
        assert p >= order - 0.2, (p, errs)
    else:
        assert abs(p - order) <= 0.2, (p, errs)


@pytest.mark.parametrize("method", ["exp2", "magnus_ca"])
def test_rate_fallback_is_second_order(method, ref10):
    """A Callable source has no w'(t): w' is the forward difference over the step."""
    src = Callable(benchmark_w)
    errs = []
    for n in (100, 200, 400):
        q, st = final(method, n, model=src)
        assert st["nrate"] == 0 and st["nfev"] == n + 1  # w(t_{j+1}) reused by the next step
        errs.append(angle(q, ref10["body"]))
    p = np.polyfit(np.log([0.1, 0.05, 0.025]), np.log(errs), 1)[0]
    assert abs(p - 2) <= 0.2


def test_nonuniform_grid_ab3_rk4(ref10):
    """Variable-step AB3 (and RK4) on a smoothly non-uniform grid keep their order."""
    errs = {"ab3": [], "rk4": []}
    ns = [200, 400, 800]
    for n in ns:
        s = np.linspace(0.0, 1.0, n + 1)
        t = 10.0 * (s + 0.05 * np.sin(2 * pi * s))
        for m in errs:
            y, _, _ = K.run(m, SRC, ID, t, np.array([n]), {}, 1)
            errs[m].append(angle(y[0, 0], ref10["body"]))
    for m, o in (("ab3", 3), ("rk4", 4)):
        p = np.polyfit(np.log(1.0 / np.asarray(ns)), np.log(errs[m]), 1)[0]
        assert p >= o - 0.2, (m, p, errs[m])


def test_decreasing_grid_returns_to_start():
    t = np.linspace(0.0, 10.0, 201)
    y, _, _ = K.run("magnus6", SRC, ID, t, np.array([200]), {}, 1)
    yb, _, _ = K.run("magnus6", SRC, y[:, 0], t[::-1].copy(), np.array([200]), {}, 1)
    assert angle(yb[0, 0], ID[0]) < 1e-9


# ---- constant angular velocity: exact ------------------------------------------------------

def closed_form(q0, w, T, frame):
    th = np.linalg.norm(w) * T
    e = np.r_[np.cos(th / 2), np.sin(th / 2) * w / np.linalg.norm(w)]
    return qmul(q0, e) if frame == "body" else qmul(e, q0)


@pytest.mark.parametrize("frame", ["body", "world"])
@pytest.mark.parametrize("method", LIE)
def test_constant_rate_exact_1e5_steps(method, frame):
    w = np.array([0.3, -1.1, 0.7])
    q0 = np.array([0.5, 0.5, -0.5, 0.5])
    n, T = 100_000, 100.0
    t = np.linspace(0.0, T, n + 1)
    opts = {"frame": frame}
    if method == "magnus_ca":
        opts["terms"] = 4
    y, wo, st = K.run(method, Constant(w), q0[None], t, np.array([n]), opts, 1)
    q = y[0, 0]
    assert abs(np.linalg.norm(q) - 1.0) < 1e-11
    assert angle(q, closed_form(q0, w, T, frame)) < 2e-11
    # same with the (N, 3) array model
    y2, _, _ = K.run(method, w[None], q0[None], t, np.array([n]), opts, 1)
    assert angle(y2[0, 0], closed_form(q0, w, T, frame)) < 2e-11


@pytest.mark.parametrize("method", LIE)
def test_lie_group_norm_1e5_steps_varying_rate(method):
    t = np.linspace(0.0, 1000.0, 100_001)
    y, _, _ = K.run(method, SRC, ID, t, np.array([100_000]), {}, 1)
    assert abs(np.linalg.norm(y[0, 0]) - 1.0) < 1e-11


# ---- Rucker 2018 table ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ref100():
    return reference(100.0)


def test_seed004_table(ref100):
    """dt = 0.1, T = 100 s (Rucker 2018 Figs. 2-3): rk4 < rk3 < ab3, about 10x apart; both
    exponential updates less accurate than rk3."""
    e = {m: angle(final(m, 1000, T=100.0)[0], ref100) for m in
         ("rk4", "rk3", "ab3", "lie_euler", "exp2")}
    assert e["rk4"] < e["rk3"] < e["ab3"]
    assert 3 < e["rk3"] / e["rk4"] < 30
    assert 3 < e["ab3"] / e["rk3"] < 30
    assert e["lie_euler"] > e["rk3"] and e["exp2"] > e["rk3"]


def test_nonunit_equals_normalized_rotation(ref100):
    """Rucker 2018 sec. III-A: with c = 0, RK on non-unit q and step-wise normalised RK give the
    same rotations (to round-off) although the norm drifts."""
    a, _ = final("rk4", 500, T=100.0)
    b, _ = final("rk4", 500, T=100.0, normalize=True)
    assert abs(np.linalg.norm(b) - 1) < 1e-14
    assert abs(np.linalg.norm(a) - 1) > 1e-6
    assert angle(a, b) < 1e-12


def test_norm_gain_limits_drift():
    a, _ = final("rk3", 1000, T=100.0)
    b, _ = final("rk3", 1000, T=100.0, norm_gain=0.1)
    assert abs(np.linalg.norm(b) - 1) < 0.1 * abs(np.linalg.norm(a) - 1)


# ---- magnus_ca: constant angular acceleration ----------------------------------------------

W0 = np.array([0.8, -0.4, 0.6])
AL = np.array([0.5, 0.9, -0.7])


def ca_exact(h, frame):
    sol = solve_ivp(lambda s, q: quat_kin(q, W0 + AL * s, frame), (0.0, h),
                    np.array([1.0, 0.0, 0.0, 0.0]), method="DOP853", rtol=1e-13, atol=1e-16)
    return sol.y[:, -1]


@pytest.mark.parametrize("frame", ["body", "world"])
@pytest.mark.parametrize("terms,order", [(1, 3), (2, 5), (3, 5), (4, 7)])
def test_magnus_ca_local_order(terms, order, frame):
    hs = [0.4, 0.2, 0.1] if terms < 4 else [0.8, 0.4, 0.2]
    errs = []
    for h in hs:
        y, _, _ = K.run("magnus_ca", W0[None], ID, np.array([0.0, h]), np.array([1]),
                        {"frame": frame, "terms": terms, "alpha": AL[None]}, 1)
        errs.append(angle(y[0, 0], ca_exact(h, frame)))
    p = np.polyfit(np.log(hs), np.log(errs), 1)[0]
    assert abs(p - order) <= 0.2, (p, errs)


def test_magnus_ca_frames_differ_and_signs_matter():
    """Using the world-frame Omega_2 sign in the body frame would be only third order."""
    h = 0.1
    yb, _, _ = K.run("magnus_ca", W0[None], ID, np.array([0.0, h]), np.array([1]),
                     {"frame": "body", "alpha": AL[None]}, 1)
    yw, _, _ = K.run("magnus_ca", W0[None], ID, np.array([0.0, h]), np.array([1]),
                     {"frame": "world", "alpha": AL[None]}, 1)
    eb, ew = ca_exact(h, "body"), ca_exact(h, "world")
    assert angle(yb[0, 0], yw[0, 0]) > 1e-5
    assert angle(yb[0, 0], eb) < 1e-3 * angle(yb[0, 0], ew)
    assert angle(yw[0, 0], ew) < 1e-3 * angle(yw[0, 0], eb)


def test_magnus_ca_with_source_rate_is_ca_model():
    """With a source, alpha = w'(t_j): a linear w(t) is integrated as exactly as terms allow."""
    from rotode.omega import Samples
    ts = np.array([0.0, 5.0])
    src = Samples(ts, np.array([W0, W0 + 5.0 * AL]))  # linear: w = W0 + AL t
    y, _, st = K.run("magnus_ca", src, ID, np.array([0.0, 0.2]), np.array([1]),
                     {"terms": 4}, 1)
    assert st["nrate"] == 1
    y2, _, _ = K.run("magnus_ca", W0[None], ID, np.array([0.0, 0.2]), np.array([1]),
                     {"terms": 4, "alpha": AL[None]}, 1)
    assert np.allclose(y[0, 0], y2[0, 0], rtol=0, atol=1e-15)
    assert angle(y[0, 0], ca_exact(0.2, "body")) < 1e-7


@pytest.mark.parametrize("deg", [10.0, 45.0, 90.0])
def test_approx_exp_within_one_percent(deg):
    """[NIRD]: the trig-free exponential is within 1 % of the exact update up to 90 deg."""
    th = np.radians(deg)
    w = np.array([[1.0, 2.0, -2.0]]) / 3.0 * th  # |w| = th rad/s, one step of 1 s
    opts = {"alpha": np.zeros((1, 3))}
    ye, _, _ = K.run("magnus_ca", w, ID, np.array([0.0, 1.0]), np.array([1]), opts, 1)
    ya, _, _ = K.run("magnus_ca", w, ID, np.array([0.0, 1.0]), np.array([1]),
                     dict(opts, exp="approx"), 1)
    assert abs(np.linalg.norm(ya[0, 0]) - 1) < 1e-15
    assert np.linalg.norm(ya[0, 0] - ye[0, 0]) < 0.01
    if deg == 90.0:
        assert np.linalg.norm(ya[0, 0] - ye[0, 0]) > 1e-3  # it is not the exact map


def test_magnus_bound_refused_or_substepped():
    w = np.array([[2.3, 0.0, 0.0]])  # 2.3 rad per 1 s step >= pi/sqrt(2)
    t = np.array([0.0, 1.0])
    with pytest.raises(ValueError, match="convergence bound"):
        K.run("magnus_ca", w, ID, t, np.array([1]), {}, 1)
    y, _, st = K.run("magnus_ca", w, ID, t, np.array([1]), {"substep": True}, 1)
    assert st["n_substeps"] == 3
    assert angle(y[0, 0], closed_form(ID[0], w[0], 1.0, "body")) < 1e-14
    # just below the bound: accepted
    w2 = np.array([[2.2, 0.0, 0.0]])
    K.run("magnus_ca", w2, ID, t, np.array([1]), {}, 1)


# ---- CG tableaus ---------------------------------------------------------------------------

@pytest.mark.parametrize("name,order", [("cg1", 1), ("cg2", 2), ("cg3", 3)])
def test_cg_order_conditions(name, order):
    tab = methods.get(name).tableau
    b, c, s = tab.b, tab.c, len(tab.b)
    Am = [[tab.a[i][j] if j < i else Fraction(0) for j in range(s)] for i in range(s)]
    assert all(isinstance(x, Fraction) for x in b + c)
    for i in range(s):
        assert sum(Am[i]) == c[i]
        assert all(Am[i][j] == 0 for j in range(i, s))  # explicit
    assert sum(b) == 1
    if order >= 2:
        assert sum(b[i] * c[i] for i in range(s)) == Fraction(1, 2)
    if order >= 3:
        assert sum(b[i] * c[i] ** 2 for i in range(s)) == Fraction(1, 3)
        assert sum(b[i] * Am[i][j] * c[j] for i in range(s) for j in range(s)) == Fraction(1, 6)
        # the extra Crouch-Grossman condition (Owren & Marthinsen 1999)
        extra = sum(b[i] ** 2 * c[i] for i in range(s)) + 2 * sum(
            b[i] * c[i] * b[j] for i in range(s) for j in range(i + 1, s))
        assert extra == Fraction(1, 3)
    if order == 2:
        assert sum(b[i] * c[i] ** 2 for i in range(s)) != Fraction(1, 3)


# ---- batching, threads, outputs, statistics ------------------------------------------------

@pytest.fixture(scope="module")
def batch():
    rng = np.random.default_rng(7)
    q0 = rng.normal(size=(1000, 4))
    return q0 / np.linalg.norm(q0, axis=1)[:, None]


@pytest.mark.parametrize("method", ["magnus_ca", "rk4", "ab3", "magnus8"])
def test_batch_equals_single_runs_bitwise(method, batch):
    t = np.linspace(0.0, 2.0, 11)
    save = np.array([0, 5, 10])
    y, w, _ = K.run(method, SRC, batch, t, save, {"frame": "world"}, 1)
    for i in range(batch.shape[0]):
        yi, wi, _ = K.run(method, SRC, batch[i:i + 1], t, save, {"frame": "world"}, 1)
        assert np.array_equal(yi[0], y[i]) and np.array_equal(wi[0], w[i])


@pytest.mark.parametrize("method", K.METHODS)
def test_workers_bitwise(method, batch):
    t = np.linspace(0.0, 3.0, 31)
    save = np.arange(0, 31, 3)
    rates = np.random.default_rng(3).normal(size=(1000, 3))
    opts = {"alpha": rates[::-1].copy()} if method == "magnus_ca" else {}
    for model in (SRC, rates):
        y1, w1, s1 = K.run(method, model, batch, t, save, dict(opts), 1)
        y2, w2, s2 = K.run(method, model, batch, t, save, dict(opts), 2)
        per1, per2 = s1.pop("per_body"), s2.pop("per_body")     # (N,) counters per body
        assert np.array_equal(y1, y2) and np.array_equal(w1, w2) and s1 == s2
        assert per1.keys() == per2.keys()
        assert all(np.array_equal(per1[k], per2[k]) for k in per1)


def test_w_out_is_body_rate():
    t = np.linspace(0.0, 5.0, 51)
    save = np.array([0, 17, 50])
    for m in ("magnus4", "rk4", "lie_euler"):
        y, w, _ = K.run(m, SRC, ID, t, save, {"frame": "body"}, 1)
        for k, j in enumerate(save):
            assert np.allclose(w[0, k], benchmark_w(t[j]), rtol=0, atol=1e-15)
        y, w, _ = K.run(m, SRC, ID, t, save, {"frame": "world"}, 1)
        for k, j in enumerate(save):
            q = y[0, k] / np.linalg.norm(y[0, k])
            wb = qmul(qmul(conj(q), np.r_[0.0, benchmark_w(t[j])]), q)[1:]
            assert np.allclose(w[0, k], wb, rtol=0, atol=1e-14)
        assert np.array_equal(y[0, 0], ID[0])


@pytest.mark.parametrize("method,per_step,extra", [
    ("lie_euler", 1, 1), ("exp2", 1, 1), ("magnus2", 1, 1), ("magnus4", 2, 1), ("magnus6", 3, 1),
    ("magnus8", 4, 1), ("cg2", 1, 1), ("cg3", 3, 1), ("rk3", 2, 1), ("rk4", 2, 1)])
def test_nfev_counts(method, per_step, extra):
    """w evaluations per step (w at a step's end is reused by the next step where possible);
    `extra` is the evaluation at t[0] or at the last output."""
    n = 20
    t = np.linspace(0.0, 2.0, n + 1)
    _, _, st = K.run(method, SRC, ID, t, np.array([n]), {}, 1)
    assert st["n_steps"] == n
    assert st["nfev"] == per_step * n + extra


def test_ab3_nfev():
    n = 20
    _, _, st = K.run("ab3", SRC, ID, np.linspace(0.0, 2.0, n + 1), np.array([n]), {}, 1)
    # w(t0); two RK4 start-up steps (2 each); one per later step except the first AB3 step,
    # which reuses w(t2); w at the output
    assert st["nfev"] == 1 + 2 * 2 + (n - 3) + 1


# ---- bad input -----------------------------------------------------------------------------

def test_errors():
    t = np.linspace(0.0, 1.0, 11)
    s = np.array([10])
    with pytest.raises(TypeError, match="unknown option.*bogus"):
        K.run("rk4", SRC, ID, t, s, {"bogus": 1}, 1)
    with pytest.raises(TypeError, match="unknown option.*norm_gain"):
        K.run("magnus4", SRC, ID, t, s, {"norm_gain": 0.1}, 1)
    with pytest.raises(TypeError, match="unknown option.*alpha"):
        K.run("rk4", SRC, ID, t, s, {"alpha": np.zeros((1, 3))}, 1)
    with pytest.raises(ValueError, match="frame"):
        K.run("rk4", SRC, ID, t, s, {"frame": "inertial"}, 1)
    with pytest.raises(ValueError, match="terms"):
        K.run("magnus_ca", SRC, ID, t, s, {"terms": 5}, 1)
    with pytest.raises(ValueError, match="exp"):
        K.run("magnus_ca", SRC, ID, t, s, {"exp": "fast"}, 1)
    with pytest.raises(ValueError, match="method"):
        K.run("rk5", SRC, ID, t, s, {}, 1)
    with pytest.raises(ValueError, match="y0.*finite"):
        K.run("rk4", SRC, np.array([[np.nan, 0, 0, 1.0]]), t, s, {}, 1)
    with pytest.raises(ValueError, match="y0.*nonzero"):
        K.run("rk4", SRC, np.zeros((1, 4)), t, s, {}, 1)
    with pytest.raises(ValueError, match=r"y0.*\(N, 4\)"):
        K.run("rk4", SRC, np.zeros((1, 3)), t, s, {}, 1)
    with pytest.raises(ValueError, match=r"model.*\(1, 3\)"):
        K.run("rk4", np.zeros((2, 3)), ID, t, s, {}, 1)
    with pytest.raises(ValueError, match="model.*finite"):
        K.run("rk4", np.array([[np.inf, 0, 0]]), ID, t, s, {}, 1)
    with pytest.raises(ValueError, match=r"alpha.*\(3,\) or \(1, 3\)"):
        K.run("magnus_ca", SRC, ID, t, s, {"alpha": np.zeros(2)}, 1)
    with pytest.raises(ValueError, match="monotonic"):
        K.run("rk4", SRC, ID, np.array([0.0, 1.0, 0.5]), np.array([2]), {}, 1)
    with pytest.raises(ValueError, match="save"):
        K.run("rk4", SRC, ID, t, np.array([11]), {}, 1)
    with pytest.raises(ValueError, match="workers"):
        K.run("rk4", SRC, ID, t, s, {}, 0)


def test_source_errors_reraised():
    def bad(t):
        if t > 0.5:
            raise RuntimeError("sensor lost")
        return np.zeros(3)
    with pytest.raises(RuntimeError, match="sensor lost"):
        K.run("magnus4", Callable(bad), ID, np.linspace(0.0, 1.0, 11), np.array([10]), {}, 1)
    with pytest.raises(ValueError, match="returned a non-finite"):
        K.run("rk4", Callable(lambda t: np.array([np.nan, 0, 0])), ID, np.linspace(0, 1, 3),
              np.array([2]), {}, 1)


def test_python_callable_source_with_two_workers(batch):
    """A Python source re-takes the GIL inside the parallel loop: same results, no deadlock."""
    src = Callable(benchmark_w)
    t = np.linspace(0.0, 1.0, 6)
    y1, _, _ = K.run("magnus4", src, batch[:20], t, np.array([5]), {}, 1)
    y2, _, _ = K.run("magnus4", src, batch[:20], t, np.array([5]), {}, 2)
    assert np.array_equal(y1, y2)
