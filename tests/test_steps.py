"""rotode.steps: single steps over arrays of bodies (user-owned time loop)."""
import tracemalloc

import numpy as np
import pytest
from reference import PHASE, A, B, benchmark_w, conj, qmul

from rotode import kinematic as K
from rotode import steps
from rotode.omega import Sinusoid

SRC = Sinusoid(A, B, PHASE)


@pytest.fixture
def qs(rng):
    q = rng.normal(size=(50, 4))
    return q / np.linalg.norm(q, axis=1)[:, None]


def one_step_run(method, q, t0, dt, frame, **opts):
    y, _, _ = K.run(method, SRC, q, np.array([t0, t0 + dt]), np.array([1]),
                    dict(frame=frame, **opts), 1)
    return y[:, 0]


@pytest.mark.parametrize("frame", ["body", "world"])
@pytest.mark.parametrize("method", ["magnus2", "magnus4", "magnus6", "magnus8", "cg2", "cg3",
                                    "rk3", "rk4"])
def test_node_steps_match_run(method, frame, qs):
    t0, dt = 0.7, 0.3
    ws = [SRC(t0 + c * dt) for c in steps.NODES[method]]
    got = getattr(steps, method)(qs, *ws, dt, frame=frame)
    assert np.allclose(got, one_step_run(method, qs, t0, dt, frame), rtol=0, atol=1e-15)


@pytest.mark.parametrize("frame", ["body", "world"])
@pytest.mark.parametrize("method", ["cg2", "cg3"])
def test_crouch_grossman_steps_match_run_bitwise(method, frame, qs):
    t0, dt = 1.5, 0.25  # exact in binary: the runner's nodes are the same doubles
    ws = [SRC(t0 + c * dt) for c in steps.NODES[method]]
    got = getattr(steps, method)(qs, *ws, dt, frame=frame)
    assert np.array_equal(got, one_step_run(method, qs, t0, dt, frame))


@pytest.mark.parametrize("frame", ["body", "world"])
@pytest.mark.parametrize("terms", [1, 2, 3, 4])
def test_magnus_ca_matches_run_bitwise(terms, frame, qs, rng):
    w = rng.normal(size=(50, 3))
    al = rng.normal(size=(50, 3))
    got = steps.magnus_ca(qs, w, al, 0.05, frame=frame, terms=terms)
    y, _, _ = K.run("magnus_ca", w, qs, np.array([0.0, 0.05]), np.array([1]),
                    {"frame": frame, "terms": terms, "alpha": al}, 1)
    assert np.array_equal(got, y[:, 0])


def test_lie_euler_and_exp2_match_run(qs):
    t0, dt = 1.5, 0.25  # exact in binary: the grid step equals dt
    got = steps.lie_euler(qs, SRC(t0), dt)
    assert np.array_equal(got, one_step_run("lie_euler", qs, t0, dt, "body"))
    got = steps.exp2(qs, SRC(t0), SRC.derivative(t0), dt, frame="world")
    assert np.array_equal(got, one_step_run("exp2", qs, t0, dt, "world"))
    got = steps.lie_euler(qs, SRC(t0), dt, exp="approx")
    assert np.array_equal(got, one_step_run("lie_euler", qs, t0, dt, "body", exp="approx"))


def test_in_place_no_allocation():
    n = 20000
    q = np.tile([1.0, 0.0, 0.0, 0.0], (n, 1))
    w = np.tile([0.1, 0.2, 0.3], (n, 1))
    al = np.zeros((n, 3))
    ref = steps.magnus_ca(q, w, al, 0.01)
    steps.magnus_ca(q, w, al, 0.01, out=q)  # warm-up of any caches
    q[:] = [1.0, 0.0, 0.0, 0.0]
    tracemalloc.start()
    r = steps.magnus_ca(q, w, al, 0.01, out=q)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert r is q
    assert peak < 20_000  # an (n, 4) temporary would be 640 kB
    assert np.array_equal(q, ref)


def test_single_body_and_broadcast_rates():
    q = np.array([1.0, 0.0, 0.0, 0.0])
    w = np.array([0.0, 0.0, 2.0])
    r = steps.magnus4(q, w, w, 0.5)
    assert r.shape == (4,)
    assert np.allclose(r, [np.cos(0.5), 0, 0, np.sin(0.5)], rtol=0, atol=1e-16)
    qq = np.tile(q, (5, 1))
    r2 = steps.magnus4(qq, w, np.tile(w, (5, 1)), 0.5)
    assert np.array_equal(r2, np.tile(r, (5, 1)))
    # lists are accepted (converted)
    assert np.array_equal(steps.lie_euler([1, 0, 0, 0], [0, 0, 2], 0.5), r)


def test_constant_rate_exact_world_and_body():
    q0 = np.array([0.5, -0.5, 0.5, 0.5])
    w = np.array([0.4, -0.2, 0.9])
    th = np.linalg.norm(w) * 0.25
    e = np.r_[np.cos(th / 2), np.sin(th / 2) * w / np.linalg.norm(w)]
    for frame, expect in (("body", qmul(q0, e)), ("world", qmul(e, q0))):
        got = steps.magnus_ca(q0, w, np.zeros(3), 0.25, frame=frame, terms=4)
        assert np.allclose(got, expect, rtol=0, atol=2e-16)


def test_user_loop_converges():
    """A user loop of steps.magnus4 reproduces run() over many steps."""
    n, T = 200, 10.0
    t = np.linspace(0.0, T, n + 1)
    q = np.array([[1.0, 0.0, 0.0, 0.0]])
    c1, c2 = steps.NODES["magnus4"]
    for j in range(n):
        h = t[j + 1] - t[j]
        steps.magnus4(q, benchmark_w(t[j] + c1 * h), benchmark_w(t[j] + c2 * h), h, out=q)
    y, _, _ = K.run("magnus4", SRC, np.array([[1.0, 0, 0, 0]]), t, np.array([n]), {}, 1)
    d = qmul(conj(y[0, 0]), q[0])
    assert np.linalg.norm(d[1:]) < 1e-13


def test_errors(qs):
    w = np.zeros((50, 3))
    with pytest.raises(ValueError, match=r"`q` must have shape \(4,\) or \(N, 4\)"):
        steps.lie_euler(np.zeros(3), np.zeros(3), 0.1)
    with pytest.raises(ValueError, match=r"`w` must have shape \(3,\) or \(50, 3\)"):
        steps.lie_euler(qs, np.zeros((49, 3)), 0.1)
    with pytest.raises(ValueError, match=r"`w` must have shape \(3,\), got \(1, 3\)"):
        steps.lie_euler(np.array([1.0, 0, 0, 0]), np.zeros((1, 3)), 0.1)
    with pytest.raises(ValueError, match="`w2` must have shape"):
        steps.magnus4(qs, w, np.zeros(4), 0.1)
    with pytest.raises(ValueError, match="`out` must be"):
        steps.lie_euler(qs, w, 0.1, out=np.zeros((50, 4), dtype=np.float32))
    with pytest.raises(ValueError, match="`out` must be"):
        steps.lie_euler(qs, w, 0.1, out=np.zeros((49, 4)))
    with pytest.raises(ValueError, match="`out` must be"):
        steps.lie_euler(qs, w, 0.1, out=np.zeros((50, 8))[:, :4])
    with pytest.raises(ValueError, match="frame"):
        steps.lie_euler(qs, w, 0.1, frame="space")
    with pytest.raises(ValueError, match="exp"):
        steps.lie_euler(qs, w, 0.1, exp="fast")
    with pytest.raises(ValueError, match="terms"):
        steps.magnus_ca(qs, w, w, 0.1, terms=0)
    with pytest.raises(ValueError, match="dt"):
        steps.lie_euler(qs, w, np.nan)
    with pytest.raises(TypeError, match="real numeric"):
        steps.lie_euler(qs, np.array(["a", "b", "c"]), 0.1)
    # non-finite input and the Magnus bound: error raised before anything is written
    q = qs.copy()
    bad = w.copy()
    bad[7, 1] = np.inf
    with pytest.raises(ValueError, match=r"`alpha` must contain only finite values \(row 7\)"):
        steps.magnus_ca(q, w, bad, 0.1, out=q)
    with pytest.raises(ValueError, match=r"`q` must contain only finite values \(row 0\)"):
        steps.rk4(np.array([np.nan, 0, 0, 1.0]), w[0], w[0], w[0], 0.1)
    fast = w.copy()
    fast[3] = [0.0, 0.0, 30.0]
    with pytest.raises(ValueError, match="body 3.*convergence bound"):
        steps.magnus_ca(q, fast, w, 0.1, out=q)
    assert np.array_equal(q, qs)
