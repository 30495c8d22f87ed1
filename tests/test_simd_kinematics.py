"""The lane kernels on quaternion kinematics (rotode/_lanes.hpp, `KinLaneModel`): rk3 and rk4
batches under constant or sinusoidal rates, body or world frame, with or without the norm gain
and per-body rates, give every body its single run's bits and the driver's one-body step's
(rotode/kinematic.pxd) on every instruction set this CPU runs, with any number of threads."""
import numpy as np
import pytest
from test_simd_batch import ISAS, N, quaternions

import rotode
from rotode import _lanes, kinematic


def _quaternions(n, seed=0):
    """Dispersed orientations, a few of them not of unit length (the norm gain's term)."""
    return quaternions(np.random.default_rng(seed), n)


def _rates(n, seed=1):
    return np.random.default_rng(seed).normal(size=(n, 3)) * 2.0


SOURCES = {
    "constant": rotode.omega.Constant([0.3, -1.2, 2.0]),
    "sinusoid": rotode.omega.Sinusoid([1.0, 0.5, 2.0], 3.0, [0.0, 0.4, 1.1]),
}
CASES = [(source, frame, gain) for source in ("constant", "sinusoid", "rows")
         for frame in ("body", "world") for gain in (0.0, 0.7)]


@pytest.mark.parametrize("isa", ISAS, indirect=True)
@pytest.mark.parametrize("method", ["rk4", "rk3"])
@pytest.mark.parametrize("workers", [1, 2])
def test_every_body_is_its_single_run(isa, method, workers):
    q0 = _quaternions(N)
    grid = np.linspace(0.0, 0.37, 38)
    save = np.arange(0, 38, 7)
    for source, frame, gain in CASES:
        rates = _rates(N)
        model = rates if source == "rows" else SOURCES[source]
        opts = {"frame": frame, "norm_gain": gain}
        y, w, stats = kinematic.run(method, model, q0, grid, save, opts, workers=workers)
        assert stats["status"] == 0 and stats["simd"] == isa, (source, frame, gain)
        for i in (0, 1, 2, 5, 8, 16, N - 2, N - 1):
            one = rates[i:i + 1] if source == "rows" else model
            y1, w1, s1 = kinematic.run(method, one, q0[i:i + 1], grid, save, opts)
            assert np.array_equal(y[i], y1[0]) and np.array_equal(w[i], w1[0]), (source, i)
            assert s1["nfev"] == stats["nfev"] == 1 + 2 * 35


@pytest.mark.parametrize("isa", ISAS, indirect=True)
def test_widths_agree_with_the_drivers_step(isa):
    """Every width gives the bits of the driver's one-body step (rotode/kinematic.pxd), through
    `rotode.integrate`: t_eval rows, `normalize`, a backward grid, a last row before the grid's
    end (no step after it)."""
    q0 = _quaternions(N, seed=3)
    t_eval = np.linspace(0.0, 0.4, 9)
    for source, frame, gain in CASES:
        model = (_rates(N, seed=4) if source == "rows"
                 else rotode.QuaternionKinematics(SOURCES[source], frame=frame, norm_gain=gain))
        extra = {"frame": frame, "norm_gain": gain} if source == "rows" else {}
        runs = []
        for name in (isa, "off"):
            _lanes.use(name)
            try:
                runs.append((rotode.integrate(model, (0.0, 0.5), q0, method="rk4", dt=0.013,
                                              t_eval=t_eval, **extra),
                             rotode.integrate(model, (0.5, 0.0), q0, method="rk3", dt=0.02,
                                              **extra)))
            finally:
                _lanes.use(isa)
        (lanes, back), (ref, ref_back) = runs
        assert "simd" not in ref.stats and lanes.stats["simd"] == isa
        assert np.array_equal(lanes.t, ref.t) and np.array_equal(lanes.y, ref.y), source
        assert np.array_equal(lanes.w, ref.w) and np.array_equal(back.y, ref_back.y), source
        assert np.array_equal(back.w, ref_back.w), source
        for got, want in ((lanes.stats, ref.stats), (back.stats, ref_back.stats)):
            assert got.pop("simd") == isa and got.keys() == want.keys(), source
            for key, value in want.items():
                pairs = ([(got[key][k], v) for k, v in value.items()] if isinstance(value, dict)
                         else [(got[key], value)])
                assert all(np.array_equal(a, b) for a, b in pairs), (source, key)


@pytest.mark.parametrize("isa", ISAS, indirect=True)
def test_normalize_and_a_failing_body(isa):
    """`normalize` as the driver's step; a body whose rate overflows fails alone (its rows NaN
    from the failure on, the others' and the counters as the driver's)."""
    q0 = _quaternions(N, seed=5)
    grid = np.linspace(0.0, 1.0, 101)
    save = np.arange(0, 101, 10)
    rates = _rates(N, seed=6)
    rates[6] = 1e300
    got, ref = [], []
    for name, out in ((isa, got), ("off", ref)):
        _lanes.use(name)
        try:
            out.append(kinematic.run("rk4", rates, q0, grid, save, {"normalize": True}))
            out.append(kinematic.run("rk3", rates, q0, grid, save, {"frame": "world"}))
        finally:
            _lanes.use(isa)
    for (y, w, s), (yr, wr, sr) in zip(got, ref, strict=True):
        # (the steps named depend on the thread's polling chunks, timed: not compared)
        assert s["status"] == sr["status"] == 2 and "body 6, step" in s["message"]
        assert np.array_equal(y, yr, equal_nan=True) and np.array_equal(w, wr, equal_nan=True)
        assert np.isnan(y[6, -1]).all() and np.isfinite(np.delete(y, 6, axis=0)).all()
        assert s["nfev"] == sr["nfev"]


def test_other_sources_keep_the_drivers_step():
    """A rate with no compiled model (a callable, samples) and ab3 take the driver's step."""
    q0 = _quaternions(4)
    for model, method in [(lambda t: np.array([0.0, 0.0, 1.0]), "rk4"),
                          (rotode.omega.Constant([0.0, 0.0, 1.0]), "ab3")]:
        out = rotode.integrate(model, (0, 0.1), q0, method=method, dt=0.05)
        assert out.success and "simd" not in out.stats
