"""A user's equations (rotode.ODE) through the specialised engine (rotode/_ode_model.hpp).

The embedded pairs on the state run each body's whole loop in the engine (a model whose size is
known at run time); the driver's own loop (``ode._USE_ENGINE = False``), rotode's only path
before, is the reference: the same accepted and rejected steps, the same counters, the same
values to the last bit, with ``normalize`` on and off, shared and per-body parameters, t_eval,
backwards, on one and two threads, for compiled and Python functions, and on failures (a nonzero
return, a NaN in dydt, a Python exception).  The thin call path of ``rotode.integrate``
(`ode.run_single`) gives the general path's result, and declines whatever is unusual.
"""
import ctypes
import importlib.util
import shutil
import subprocess
import sysconfig
from pathlib import Path

import numpy as np
import pytest

import rotode
from rotode import integration, ode

PAIRS = tuple(ode.ENGINE_PAIRS)
#: the pairs and the Runge-Kutta-Munthe-Kaas methods of their tableaux (rotode/_ode_model.hpp
#: `OdeRkmkModel`: each quaternion block in the local coordinates of its step)
METHODS = PAIRS + tuple(ode.ENGINE_GROUP_PAIRS)

C_SOURCE = r"""
#include <math.h>
/* y = [x, q1 (4), w1 (3), q2 (4), w2 (3)]: two torque-free bodies (blocks at 1 and 8), the
   first driven by p[6] sin(t) about its x axis, and x' = w1_x^2 + w2_x^2.  p: the principal
   inertias of the two bodies (6), the drive, then a failure from t >= p[7] when p[7] > 0: a
   nonzero return (p[8] == 0) or a NaN in dydt (p[8] == 1). */
static void body(const double* q, const double* w, const double* I, double tau, double* dq,
                 double* dw) {
    dq[0] = 0.5 * (-q[1] * w[0] - q[2] * w[1] - q[3] * w[2]);
    dq[1] = 0.5 * (q[0] * w[0] + q[2] * w[2] - q[3] * w[1]);
    dq[2] = 0.5 * (q[0] * w[1] - q[1] * w[2] + q[3] * w[0]);
    dq[3] = 0.5 * (q[0] * w[2] + q[1] * w[1] - q[2] * w[0]);
    dw[0] = ((I[1] - I[2]) * w[1] * w[2] + tau) / I[0];
    dw[1] = (I[2] - I[0]) * w[2] * w[0] / I[1];
    dw[2] = (I[0] - I[1]) * w[0] * w[1] / I[2];
}
int duo(double t, const double* y, double* dy, const double* p) {
    body(y + 1, y + 5, p, p[6] * sin(t), dy + 1, dy + 5);
    body(y + 8, y + 12, p + 3, 0.0, dy + 8, dy + 12);
    dy[0] = y[5] * y[5] + y[12] * y[12];
    if (p[7] > 0.0 && t >= p[7]) {
        if (p[8] == 0.0) return 3;
        dy[3] = NAN;
    }
    return 0;
}
"""

P0 = np.array([2.0, 1.5, 1.0, 1.2, 3.0, 0.7, 0.4, 0.0, 0.0])
Y0 = np.array([0.0, 0.9, 0.1, -0.2, 0.3, 1.5, -0.4, 2.0,
               1.0, 0.0, 0.0, 0.0, 0.2, 1.1, -0.3])


@pytest.fixture(scope="module")
def duo(tmp_path_factory):
    return build_duo(tmp_path_factory.mktemp("odeengine"))


def build_duo(d):
    """`C_SOURCE`'s ``duo`` compiled in the directory d, as a ctypes function (the test
    skipped without a C compiler)."""
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        pytest.skip("no C compiler")
    (d / "duo.c").write_text(C_SOURCE)
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(d / "libduo.so"),
                    str(d / "duo.c"), "-lm"], check=True)
    f = ctypes.CDLL(str(d / "libduo.so")).duo
    ptr = ctypes.POINTER(ctypes.c_double)
    f.restype = ctypes.c_int
    f.argtypes = [ctypes.c_double, ptr, ptr, ptr]
    return f


def _batch(n, seed=7):
    """n bodies' states and parameter rows, all different."""
    rng = np.random.default_rng(seed)
    Y = np.tile(Y0, (n, 1))
    Y[:, 5:8] += 0.3 * rng.normal(size=(n, 3))
    Y[:, 1:5] *= rng.uniform(0.8, 1.3, size=(n, 1))        # not unit: normalize shows
    P = np.tile(P0, (n, 1))
    P[:, :6] *= rng.uniform(0.8, 1.2, size=(n, 6))
    return Y, P


def _both(model, t_span, y0, **kw):
    """The run by the engine and by the driver's loop (the general path, not the thin one)."""
    out = []
    for use in (True, False):
        ode._USE_ENGINE = use
        try:
            out.append(rotode.integrate(model, t_span, y0, **kw))
        finally:
            ode._USE_ENGINE = True
    return out


def _same(a, b):
    sa, sb = dict(a.stats), dict(b.stats)
    pa, pb = sa.pop("per_body", {}), sb.pop("per_body", {})
    assert sa == sb
    assert list(sa) == list(sb)
    assert pa.keys() == pb.keys()
    for key in pa:
        np.testing.assert_array_equal(pa[key], pb[key])
    np.testing.assert_array_equal(a.t, b.t)
    np.testing.assert_array_equal(a.y, b.y)
    assert a.y.dtype == b.y.dtype and a.y.shape == b.y.shape
    assert a.w is None and b.w is None
    assert a.quaternions == b.quaternions
    assert (a.status, a.message, a.success) == (b.status, b.message, b.success)


def test_the_engine_runs_the_registry_pairs_of_an_ode():
    assert set(PAIRS) == {"bs3", "dopri5", "dop853"}
    assert set(PAIRS) <= set(rotode.methods.names("ode"))
    assert ode.ENGINE_GROUP_PAIRS == {"rkmk3": ode.ENGINE_PAIRS["bs3"],
                                      "rkmk5": ode.ENGINE_PAIRS["dopri5"],
                                      "rkmk8": ode.ENGINE_PAIRS["dop853"]}
    assert ode.ENGINE_CAP == 64


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("normalize", [True, False])
@pytest.mark.parametrize("params", ["shared", "per body"])
@pytest.mark.parametrize("t_eval", [None, [0.0, 0.3, 1.7, 3.9, 4.0]])
@pytest.mark.parametrize("workers", [1, 2])
def test_the_engine_is_the_drivers_loop_bit_for_bit(duo, method, normalize, params, t_eval,
                                                     workers):
    Y, P = _batch(5)
    model = rotode.ODE(duo, n=15, quaternions=[1, 8], params=P if params == "per body" else P0)
    kw = {"normalize": normalize} if method in PAIRS else {}    # (rkmk: unit by construction)
    if method not in PAIRS and normalize:
        Y[:, 1:5] /= np.linalg.norm(Y[:, 1:5], axis=1, keepdims=True)
        Y[:, 8:12] /= np.linalg.norm(Y[:, 8:12], axis=1, keepdims=True)
    a, b = _both(model, (0.0, 4.0), Y, method=method, rtol=1e-7, atol=1e-9, t_eval=t_eval,
                 workers=workers, **kw)
    _same(a, b)
    assert a.success and a.stats["n_steps"] > 10
    if normalize:               # every row's blocks unit (rows projected at output)
        for off in (1, 8):
            np.testing.assert_allclose(np.linalg.norm(a.y[..., off:off + 4], axis=-1), 1.0,
                                       rtol=0, atol=4e-16)


@pytest.mark.parametrize("method", METHODS)
def test_backwards_and_single_bodies_too(duo, method):
    Y, P = _batch(3)
    for i in range(3):
        model = rotode.ODE(duo, n=15, quaternions=[1, 8], params=P[i])
        for span, t_eval in (((2.0, -1.5), None), ((2.0, -1.5), [2.0, 1.0, -1.5]),
                             ((0.0, 3.0), [0.5])):
            a, b = _both(model, span, Y[i], method=method, rtol=1e-6, atol=1e-8,
                         t_eval=t_eval, max_step=0.4)
            _same(a, b)


def test_a_batch_is_its_single_runs_through_the_engine(duo):
    Y, P = _batch(6)
    batch = rotode.integrate(rotode.ODE(duo, n=15, quaternions=[1, 8], params=P), (0, 3), Y,
                             method="dop853", rtol=1e-9, atol=1e-11, workers=2)
    for i in range(6):
        one = rotode.integrate(rotode.ODE(duo, n=15, quaternions=[1, 8], params=P[i]),
                               (0, 3), Y[i], method="dop853", rtol=1e-9, atol=1e-11)
        np.testing.assert_array_equal(batch.y[i], one.y)
        assert batch.stats["per_body"]["n_steps"][i] == one.stats["n_steps"]


@pytest.mark.parametrize("method", METHODS)
def test_a_python_fun_takes_the_engine_with_the_same_bits(duo, method):
    ptr = ctypes.POINTER(ctypes.c_double)
    p = np.ascontiguousarray(P0)

    def through_python(t, y):       # the same C function called from Python: the same bits
        y = np.ascontiguousarray(y)
        dy = np.empty(15)
        assert duo(t, y.ctypes.data_as(ptr), dy.ctypes.data_as(ptr), p.ctypes.data_as(ptr)) == 0
        return dy
    py = rotode.ODE(through_python, n=15, quaternions=[1, 8])
    c = rotode.ODE(duo, n=15, quaternions=[1, 8], params=P0)
    Y, _ = _batch(3)
    for workers in (1, 2):
        a, b = _both(py, (0, 2), Y, method=method, rtol=1e-7, atol=1e-9, workers=workers)
        _same(a, b)
        np.testing.assert_array_equal(a.y, rotode.integrate(c, (0, 2), Y, method=method,
                                                            rtol=1e-7, atol=1e-9).y)


def test_a_state_above_the_cap_keeps_the_drivers_loop():
    nb = 17                                     # 17 bodies: 119 states > ENGINE_CAP

    def chain(t, y):
        q = y[:4 * nb].reshape(nb, 4)
        w = y[4 * nb:].reshape(nb, 3)
        dq = 0.5 * np.column_stack([-(q[:, 1:] * w).sum(1),
                                    q[:, :1] * w + np.cross(q[:, 1:], w)])
        return np.concatenate([dq.ravel(), np.zeros(3 * nb)])
    y0 = np.concatenate([np.tile([1.0, 0, 0, 0], nb), np.tile([0.1, 1.0, 0.2], nb)])
    model = rotode.ODE(chain, n=7 * nb, quaternions=list(range(0, 4 * nb, 4)))
    a, b = _both(model, (0, 1), y0, method="dopri5", rtol=1e-8, atol=1e-10)
    _same(a, b)
    assert a.success


# ---- failures ------------------------------------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("kind, reason", [(0, "returned a nonzero status"),
                                          (1, "non-finite derivative")])
@pytest.mark.parametrize("t_eval", [None, [0.5, 1.0, 2.9, 3.0]])
def test_failures_are_reported_as_the_driver_reports_them(duo, method, kind, reason, t_eval):
    Y, P = _batch(4)
    P[2, 7:9] = [1.9, kind]                     # body 2 fails from t = 1.9 on
    model = rotode.ODE(duo, n=15, quaternions=[1, 8], params=P)
    for workers in (1, 2):
        a, b = _both(model, (0, 3), Y, method=method, rtol=1e-6, atol=1e-8, t_eval=t_eval,
                     workers=workers)
        _same(a, b)
        assert not a.success and "body 2" in a.message and reason in a.message
        assert np.isnan(a.y[2, -1]).all() and np.isfinite(np.delete(a.y, 2, axis=0)).all()
    one = rotode.ODE(duo, n=15, quaternions=[1, 8], params=P[2])
    a, b = _both(one, (0, 3), Y[2], method=method, rtol=1e-6, atol=1e-8)
    _same(a, b)
    c = rotode.integrate(one, (0, 3), Y[2], method=method, rtol=1e-6, atol=1e-8)  # thin
    _same(c, b)
    assert reason in c.message


def test_a_failure_at_the_first_evaluations(duo):
    p = P0.copy()
    p[7:9] = [1e-300, 1]                        # NaN from the first evaluation after t0
    for method in METHODS:
        for t0 in (0.0, 1.0):
            a, b = _both(rotode.ODE(duo, n=15, quaternions=[1, 8], params=p), (t0, 2.0), Y0,
                         method=method, rtol=1e-6, atol=1e-8)
            _same(a, b)
            assert not a.success and a.stats["nfev"] == (2 if t0 == 0.0 else 1)


def test_python_errors_are_re_raised_through_the_engine():
    class Boom(Exception):
        pass

    def spin(t, y):
        q, w = y[:4], np.array([0.3, -0.4, 1.1])
        return np.concatenate([0.5 * np.array([-q[1:] @ w, *(q[0] * w + np.cross(q[1:], w))]),
                               w])

    def bad(t, y):
        if t > 0.5:
            raise Boom("at t > 0.5")
        return spin(t, y)

    def interrupt(t, y):
        if t > 0.5:
            raise KeyboardInterrupt
        return spin(t, y)
    y0 = np.array([1.0, 0, 0, 0, 0, 0, 0])
    for method in PAIRS:
        with pytest.raises(Boom, match="t > 0.5"):
            rotode.integrate(rotode.ODE(bad, quaternions=[0]), (0, 1), y0, method=method)
        with pytest.raises(Boom, match="t > 0.5"):
            rotode.integrate(rotode.ODE(bad, quaternions=[0]), (0, 1), np.tile(y0, (20, 1)),
                             method=method, workers=2)
        with pytest.raises(KeyboardInterrupt):
            rotode.integrate(rotode.ODE(interrupt, quaternions=[0]), (0, 1),
                             np.tile(y0, (50, 1)), method=method, workers=2)


# ---- the thin call path ----------------------------------------------------------------------

def _general(monkeypatch, *args, **kw):
    """`integrate` by its general path (a Plan and `run_plan`), the thin one switched off."""
    with monkeypatch.context() as m:
        m.setattr(integration, "thin_run", lambda *a: None)
        return rotode.integrate(*args, **kw)


@pytest.mark.parametrize("method", METHODS)
def test_the_thin_path_is_the_general_path(duo, monkeypatch, method):
    model = rotode.ODE(duo, n=15, quaternions=[1, 8], params=P0)
    free = rotode.ODE(duo, quaternions=(8, 1), params=P0)          # n from y0
    atol = np.linspace(1e-9, 1e-7, 15)
    for mdl, span, y0, tol in ((model, (0, 5), Y0, {}),
                               (model, [1, -2.5], Y0, dict(rtol=1e-9)),
                               (free, (0.0, 3), Y0 * 1.2, dict(rtol=1e-8, atol=1e-10)),
                               (model, (0, 3), Y0, dict(rtol=1e-8, atol=atol)),
                               (model, (0, 3), Y0, dict(rtol=None, atol=None))):
        assert ode.run_single(mdl, span, y0, method, tol.get("rtol"), tol.get("atol")) \
            is not None
        _same(rotode.integrate(mdl, span, y0, method=method, **tol),
              _general(monkeypatch, mdl, span, y0, method=method, **tol))
    if method not in PAIRS:     # (a Lie-group method refuses the option, on either path)
        with pytest.raises(TypeError, match="option `normalize` is not accepted"):
            rotode.integrate(model, (0, 3), Y0, method=method, rtol=1e-8, normalize=True)
        return
    # Rucker's non-unit blocks (normalize=False) take the thin path too, with their own bits
    assert ode.run_single(model, (0, 3), Y0 * 1.2, method, 1e-8, None, False) is not None
    loose = rotode.integrate(model, (0, 3), Y0 * 1.2, method=method, rtol=1e-8,
                             normalize=False)
    _same(loose, _general(monkeypatch, model, (0, 3), Y0 * 1.2, method=method, rtol=1e-8,
                          normalize=False))
    assert abs(np.linalg.norm(loose.y[-1, 1:5]) - 1.0) > 1e-3      # (not projected)


@pytest.mark.filterwarnings("ignore:`rtol` is too low")
def test_the_thin_path_declines_anything_unusual(duo, monkeypatch):
    model = rotode.ODE(duo, n=15, quaternions=[1, 8], params=P0)
    ok = (model, (0, 1), Y0, "dop853", 1e-6, 1e-8)
    assert ode.run_single(*ok) is not None
    declined = [
        (rotode.ODE(lambda t, y: np.zeros(15), n=15),) + ok[1:],         # a Python fun
        (rotode.ODE(duo, n=15, params=np.tile(P0, (1, 1))),) + ok[1:],   # per-body params
        (rotode.ODE(duo, n=16, params=P0),) + ok[1:],                    # n differs
        ok[:3] + ("DOP853", 1e-6, 1e-8), ok[:3] + ("rk4", 1e-6, 1e-8),
        (rotode.ODE(duo, n=15, params=P0), (0, 1), Y0, "rkmk8", 1e-6, 1e-8),  # no block
        ok[:3] + ("dop853", 1e-20, 1e-8),              # below 100 eps: the general path warns
        ok[:3] + ("dop853", 0.0, 1e-8), ok[:3] + ("dop853", np.float64(1e-6), 1e-8),
        ok[:3] + ("dop853", 1e-6, -1.0), ok[:3] + ("dop853", 1e-6, np.zeros(14)),
        ok[:3] + ("dop853", 1e-6, np.full(15, np.nan)), ok[:3] + ("dop853", 1e-6, 1),
        (model, (0, 1), list(Y0)) + ok[3:], (model, (0, 1), Y0.astype(np.float32)) + ok[3:],
        (model, (0, 1), np.where(np.arange(15) == 3, np.nan, Y0)) + ok[3:],
        (model, (0, 1), np.where((np.arange(15) >= 8) & (np.arange(15) < 12), 0.0, Y0))
        + ok[3:],
        (model, (0, 1), np.tile(Y0, (1, 1))) + ok[3:], (model, (0, 1), Y0[::-1]) + ok[3:],
        (model, (1, 1), Y0) + ok[3:], (model, (0, np.inf), Y0) + ok[3:],
        (model, np.array([0.0, 1.0]), Y0) + ok[3:], (model, (0, 1, 2), Y0) + ok[3:],
        (model, (0, True), Y0) + ok[3:], (model, (0, 10 ** 400), Y0) + ok[3:],
        (rotode.ODE(duo, quaternions=[12], params=P0),) + ok[1:],      # a block past the end
    ]
    for args in declined:
        assert ode.run_single(*args) is None, args[1:]
    for normalize in (1, np.bool_(True), None):        # (the general path checks these)
        assert ode.run_single(*ok, normalize) is None
    assert rotode._plan.thin_run(*ok, "body", {}) is None
    assert rotode._plan.thin_run(*ok, None, {"normalize": True, "x": 1}) is None
    assert ode.run_single(*ok[:3], "rkmk8", 1e-6, 1e-8) is not None
    assert rotode._plan.thin_run(*ok[:3], "rkmk8", 1e-6, 1e-8, None, {"normalize": True}) is None
    with pytest.warns(UserWarning, match="`rtol` is too low"):      # (not swallowed)
        rotode.integrate(model, (0, 1), Y0, method="dop853", rtol=1e-20)
    # what the general path refuses, integrate still refuses with its own message
    for args in declined[6:]:
        model_, span, y0, method, rtol, atol = args
        try:
            want = _general(monkeypatch, model_, span, y0, method=method, rtol=rtol, atol=atol)
        except Exception as exc:        # (the same error, whatever it is)
            with pytest.raises(type(exc), match=None):
                rotode.integrate(model_, span, y0, method=method, rtol=rtol, atol=atol)
            continue
        _same(rotode.integrate(model_, span, y0, method=method, rtol=rtol, atol=atol), want)


# ---- the benchmark's spacecraft (numba) ------------------------------------------------------

@pytest.fixture(scope="module")
def spacecraft():
    pytest.importorskip("numba")
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "spacecraft.py"
    if not path.exists():
        pytest.skip("benchmarks/ not in this checkout")
    spec = importlib.util.spec_from_file_location("rotode_bench_spacecraft_engine", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("method", METHODS)
def test_the_spacecraft_of_the_benchmark(spacecraft, monkeypatch, method):
    sc = spacecraft
    p, y0 = sc.params(), sc.initial_state()
    model = rotode.ODE(sc.make_cfunc(), n=16, quaternions=[6], params=p)
    kw = dict(method=method, rtol=1e-8, atol=sc.atol_of(1e-8))
    a, b = _both(model, (0, 600), y0, **kw)
    _same(a, b)
    _same(rotode.integrate(model, (0, 600), y0, **kw),
          _general(monkeypatch, model, (0, 600), y0, **kw))
    a, b = _both(model, (0, 600), np.tile(y0, (3, 1)), t_eval=np.linspace(0, 600, 7),
                 workers=2, **kw)
    _same(a, b)
