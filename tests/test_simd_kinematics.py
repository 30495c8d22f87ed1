"""The lane kernels on quaternion kinematics (rotode/_lanes.hpp, `KinLaneModel` and
`KinStepModel`): rk3, rk4, ab3, Lie-Euler, the Crouch-Grossman methods, exp2, the fixed-step
Magnus methods (magnus2, magnus4, magnus6, magnus8) and magnus_ca (its bound, its sub-steps) in
batches under constant or sinusoidal
rates, body or world frame, with or without the norm gain and per-body rates, give every body
its single run's bits and the driver's one-body step's (rotode/kinematic.pyx `_step`) on every
instruction set this CPU runs, with any number of threads."""
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
    """A rate with no compiled model (a callable, samples), magnus_ca with per-body angular
    accelerations (`alpha`), and exp2 under a rate without its derivative take the driver's
    step."""
    q0 = _quaternions(4)
    samples = rotode.omega.Samples([0.0, 0.05, 0.1], [[0.0, 0.0, 1.0]] * 3, kind="previous")
    for model, method in [(lambda t: np.array([0.0, 0.0, 1.0]), "rk4"),
                          (lambda t: np.array([0.0, 0.0, 1.0]), "exp2"),
                          (samples, "cg2")]:
        out = rotode.integrate(model, (0, 0.1), q0, method=method, dt=0.05)
        assert out.success and "simd" not in out.stats, method
    out = rotode.integrate(np.ones((4, 3)), (0, 0.1), q0, method="magnus_ca", dt=0.05,
                           alpha=np.full((4, 3), 0.5))
    assert out.success and "simd" not in out.stats


# the fixed-step methods KinStepModel steps (rotode/_lanes.hpp): ab3, the Crouch-Grossman
# product (lie_euler, cg1, cg2, cg3), exp2, the Magnus methods of one to four Gauss nodes and
# magnus_ca
STEPPED = ["ab3", "lie_euler", "cg1", "cg2", "cg3", "exp2", "magnus2", "magnus4", "magnus6",
           "magnus8", "magnus_ca"]
GROUP = STEPPED[1:]


def _cases(method):
    """(source, options) of a method: every source and frame, the norm gain (ab3) or the
    approximate exponential (the Lie-group methods)."""
    extra = ({"norm_gain": 0.7}, {"normalize": True}) if method == "ab3" else ({"exp": "approx"},)
    if method == "magnus_ca":
        extra += ({"terms": 1}, {"terms": 3}, {"terms": 4, "substep": True})
    return [(source, dict(opts, frame=frame)) for source in ("constant", "sinusoid", "rows")
            for frame in ("body", "world") for opts in ({},) + extra]


def _off_run(isa, *args, **kw):
    """kinematic.run with the driver's one-body step ("off"), `isa` restored after."""
    _lanes.use("off")
    try:
        return kinematic.run(*args, **kw)
    finally:
        _lanes.use(isa)


def _same_stats(got, ref, isa, failed=None):
    """The stats of a lane run and of the driver's: the same, `simd` the lanes' set (a failed
    body's: the message and that body's evaluations, which depend on the steps to the thread's
    timed polling chunk's end, not compared)."""
    got, ref = dict(got), dict(ref)
    assert "simd" not in ref and got.pop("simd") in (isa, "scalar") and got.keys() == ref.keys()
    if failed is not None:
        got["message"] = ref["message"] = None
        got["per_body"] = {k: np.delete(v, failed) for k, v in got["per_body"].items()}
        ref["per_body"] = {k: np.delete(v, failed) for k, v in ref["per_body"].items()}
    for key, value in ref.items():
        pairs = ([(got[key][k], v) for k, v in value.items()] if isinstance(value, dict)
                 else [(got[key], value)])
        assert all(np.array_equal(a, b) for a, b in pairs), key


def _same_as_off(isa, method, model, q0, grid, save, opts, workers=1, failed=None):
    """The batch in lanes of `isa` and the driver's one body at a time: rows, rates and stats
    bit for bit (`_same_stats`); returns the lanes' rows and stats."""
    y, w, stats = kinematic.run(method, model, q0, grid, save, opts, workers=workers)
    yr, wr, sr = _off_run(isa, method, model, q0, grid, save, opts, workers=workers)
    assert np.array_equal(y, yr, equal_nan=True) and np.array_equal(w, wr, equal_nan=True)
    _same_stats(stats, sr, isa, failed)
    return y, w, stats


@pytest.mark.parametrize("isa", ISAS, indirect=True)
@pytest.mark.parametrize("method", STEPPED)
@pytest.mark.parametrize("workers", [1, 2])
def test_stepped_methods_every_body_is_its_single_run(isa, method, workers):
    """ab3, Lie-Euler, the Crouch-Grossman methods, exp2 (w' of the source, or 0) and the
    Magnus methods of one to four Gauss nodes in lanes: every source, frame, the norm gain and
    `normalize` (ab3) or the approximate exponential, on an uneven grid with rows not at its
    start: the batch is the driver's one body at a time, and each body its single run (rows,
    rates, w and w' evaluations), bit for bit, in the lanes of `isa`."""
    q0 = _quaternions(N, seed=7)
    grid = np.cumsum(np.r_[0.0, 0.004 + 0.01 * np.random.default_rng(8).random(40)])
    for save in (np.arange(0, 38, 7), np.array([1, 2, 3, 17, 30])):
        for source, opts in _cases(method):
            rates = _rates(N, seed=9)
            model = rates if source == "rows" else SOURCES[source]
            y, w, stats = _same_as_off(isa, method, model, q0, grid, save, opts, workers)
            assert stats["status"] == 0 and stats["simd"] == isa, (source, opts)
            for i in (0, 1, 5, 8, N - 1):
                one = rates[i:i + 1] if source == "rows" else model
                y1, w1, s1 = _off_run(isa, method, one, q0[i:i + 1], grid, save, opts)
                assert np.array_equal(y[i], y1[0]) and np.array_equal(w[i], w1[0]), (source, i)
                assert s1["nfev"] == stats["nfev"] and s1["nrate"] == stats["nrate"]


@pytest.mark.parametrize("isa", ISAS, indirect=True)
@pytest.mark.parametrize("method", STEPPED)
def test_stepped_methods_backward_small_batches_and_a_failing_body(isa, method):
    """Through `rotode.integrate`: t_eval rows and a backward grid; steps long enough that
    |h w / 2| > 1 in some lanes of a block and not in others; batches of 1 and 3 bodies (body
    by body below half a block's lanes); a body whose rates (1e160) overflow fails alone (its
    rows NaN, its lane-mates' and the counters the driver's)."""
    q0 = _quaternions(N, seed=10)
    rates = _rates(N, seed=11) * np.linspace(0.2, 4.0, N)[:, None]
    sinusoid = rotode.QuaternionKinematics(SOURCES["sinusoid"], frame="world")
    t_eval = np.linspace(0.0, 0.4, 9)
    calls = [(rates, (0.0, 0.5), q0, dict(dt=0.013, t_eval=t_eval)),
             (rates, (0.5, 0.0), q0, dict(dt=0.02)),
             (rates, (0.0, 1.2), q0, dict(dt=0.3)),
             (sinusoid, (0.5, -0.1), q0, dict(dt=0.03)),
             (rates[:1], (0.0, 0.3), q0[:1], dict(dt=0.01)),
             (rates[:3], (0.3, 0.0), q0[:3], dict(dt=0.01, frame="world"))]
    for model, span, y0, kw in calls:
        if method == "magnus_ca":              # (the steps of 0.3 go beyond its bound)
            kw = dict(kw, substep=True)
        got = rotode.integrate(model, span, y0, method=method, **kw)
        _lanes.use("off")
        try:
            ref = rotode.integrate(model, span, y0, method=method, **kw)
        finally:
            _lanes.use(isa)
        n = len(y0)
        assert got.stats["simd"] == (isa if 2 * n > _lanes.width(isa) or isa == "scalar"
                                     else "scalar"), (span, n)
        assert np.array_equal(got.t, ref.t) and np.array_equal(got.y, ref.y), (span, n)
        assert np.array_equal(got.w, ref.w), (span, n)
        _same_stats(got.stats, ref.stats, isa)
    bad = _rates(N, seed=12)
    bad[6] = 1e160
    grid = np.linspace(0.0, 1.0, 101)
    save = np.arange(0, 101, 10)
    for frame in ("body", "world"):
        if method == "magnus_ca":              # 1e160 rad/s: beyond its bound, the run fails
            with pytest.raises(ValueError, match="body 6") as got:
                kinematic.run(method, bad, q0, grid, save, {"frame": frame})
            with pytest.raises(ValueError, match="body 6") as ref:
                _off_run(isa, method, bad, q0, grid, save, {"frame": frame})
            assert str(got.value) == str(ref.value)
            continue
        y, w, stats = _same_as_off(isa, method, bad, q0, grid, save, {"frame": frame}, failed=6)
        assert stats["status"] == 2 and "body 6, step" in stats["message"]
        assert np.isnan(y[6, -1]).all() and np.isfinite(np.delete(y, 6, axis=0)).all()
        assert stats["simd"] == isa


@pytest.mark.parametrize("isa", ISAS, indirect=True)
@pytest.mark.parametrize("frame", ["body", "world"])
def test_magnus_ca_bound_and_substeps_per_lane(isa, frame):
    """magnus_ca's convergence bound in lanes: steps long enough that some bodies of a block
    rotate beyond pi/sqrt(2) and others not.  Without `substep` the first such body fails the
    run with the driver's message (its body index, step and angle); with it, each of those
    bodies takes its own number of equal sub-steps (the double instance, lane by lane) and its
    lane-mates none: rows, rates and the sub-step counts the driver's one body at a time, and
    each body its single run; beyond MAX_SUBSTEPS the same failure as the driver's."""
    q0 = _quaternions(N, seed=13)
    rates = _rates(N, seed=14) * np.linspace(0.05, 8.0, N)[:, None]
    grid = np.linspace(0.0, 2.0, 9)                 # h = 0.25: |w| h from 0.01 to ~10 rad
    save = np.arange(0, 9, 2)
    angles = 0.25 * np.linalg.norm(rates, axis=1)
    assert (angles >= 2.2214).any() and (angles < 2.2214).sum() >= N // 2
    for model in (rates, rotode.omega.Sinusoid([6.0, 3.0, 9.0], 3.0, [0.0, 0.4, 1.1])):
        opts = {"frame": frame, "terms": 3}
        with pytest.raises(ValueError, match="convergence bound") as got:
            kinematic.run("magnus_ca", model, q0, grid, save, opts)
        with pytest.raises(ValueError, match="convergence bound") as ref:
            _off_run(isa, "magnus_ca", model, q0, grid, save, opts)
        assert str(got.value) == str(ref.value)
        opts["substep"] = True
        y, w, stats = _same_as_off(isa, "magnus_ca", model, q0, grid, save, opts)
        assert stats["status"] == 0 and stats["n_substeps"] > 0
        if model is rates:
            subs = []
            for i in range(N):
                y1, w1, s1 = _off_run(isa, "magnus_ca", rates[i:i + 1], q0[i:i + 1], grid, save,
                                      opts)
                assert np.array_equal(y[i], y1[0]) and np.array_equal(w[i], w1[0]), i
                assert (s1["n_substeps"] > 0) == (angles[i] >= 2.2214), i
                subs.append(s1["n_substeps"])
            assert stats["n_substeps"] == max(subs) and len(set(subs)) > 2
    huge = rates.copy()
    huge[5] *= 1e7
    opts = {"frame": frame, "substep": True}
    with pytest.raises(ValueError, match="MAX_SUBSTEPS") as got:
        kinematic.run("magnus_ca", huge, q0, grid, save, opts)
    with pytest.raises(ValueError, match="MAX_SUBSTEPS") as ref:
        _off_run(isa, "magnus_ca", huge, q0, grid, save, opts)
    assert str(got.value) == str(ref.value) and "(body 5)" in str(got.value)
