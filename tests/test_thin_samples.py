"""The thin path of ``dt="samples"`` (gyroscope data: `rotode._plan.thin_fixed` ->
`kinematic.run_fixed_single` -> the driver's fixed-grid loop, `_driver.thin_stepper_rows`):
one body under a `rotode.omega.Samples` rate stepped on the sample times without the general
path's set-up.

Each call is compared with the same call on the general path (``workers=None`` takes it): the
same grid, rows, angular velocities and stats, to the bit, for every fixed-step kinematic
method (the pairs at fixed steps among them), every interpolation kind, both frames, the whole
record and a span inside it, backwards, with ``save_every`` and ``t_eval``, y0 as an array,
list or tuple, a `QuaternionKinematics` wrapping the samples.  `_plan.sample_grid`'s grid is
checked against the np.unique construction it replaced for calls without ``t_eval``.  Inputs
the general path refuses still raise its errors; an independent check: constant samples give
the exact rotation.
"""
import numpy as np
import pytest
from test_thin_fixed import _same

import rotode
from rotode import _plan, kinematic

T = np.linspace(0.0, 2.0, 41) + 0.013 * np.sin(np.arange(41))       # uneven sample times
W = np.c_[np.sin(3 * T), 0.5 * np.cos(2 * T), 0.8 - 0.3 * T]
Q0 = [0.9, 0.1, -0.2, 0.3]
KINDS = ("previous", "linear", "cubic")
METHODS = sorted(kinematic._FIXED_SPECS)
# (t_span, save_every, t_eval): the record, inside it (ends between samples), backwards, every
# third row, requested times
CALLS = [((T[0], T[-1]), None, None), ((0.31, 1.57), None, None), ((T[-1], 0.2), None, None),
         ((T[0], T[-1]), 3, None), ((0.1, 1.9), None, [0.5, 0.77, 1.9])]


def _source(kind, bias=0.0):
    return rotode.omega.Samples(T, W, kind=kind, bias=bias)


def _thin_and_general(model, t_span, y0, method, save_every, t_eval, frame=None):
    fast = _plan.thin_fixed(model, t_span, y0, method, "samples", save_every, frame, {}, t_eval)
    assert fast is not None, (method, t_span)
    thin = rotode.integrate(model, t_span, y0, method=method, dt="samples",
                            save_every=save_every, t_eval=t_eval, frame=frame)
    general = rotode.integrate(model, t_span, np.asarray(y0, float), method=method,
                               dt="samples", save_every=save_every, t_eval=t_eval, frame=frame,
                               workers=None)
    return thin, general


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("frame", [None, "world"])
@pytest.mark.parametrize("method", METHODS)
def test_thin_samples_call_is_the_general_one(kind, frame, method):
    src = _source(kind, bias=[0.01, -0.02, 0.03] if kind == "linear" else 0.0)
    for t_span, every, t_eval in CALLS:
        thin, general = _thin_and_general(src, t_span, Q0, method, every, t_eval, frame)
        _same(thin, general)


@pytest.mark.parametrize("y0", [np.array(Q0), Q0, tuple(Q0)])
def test_thin_samples_takes_kinematics_and_any_y0(y0):
    model = rotode.QuaternionKinematics(_source("cubic"), frame="world")
    thin, general = _thin_and_general(model, (T[0], T[-1]), y0, "magnus4", None, None)
    _same(thin, general)


@pytest.mark.parametrize("kind", KINDS)
def test_sample_grid_is_the_unique_grid(kind):
    src = _source(kind)
    for t_span in [(T[0], T[-1]), (0.31, 1.57), (T[-1], 0.2), (T[3], 1.0), (-1.0, 3.0),
                   (0.5, 0.51)]:
        t0, tf = t_span
        direction = 1.0 if tf > t0 else -1.0
        s = direction * (src.times - t0)
        inner = src.times[(s > 0) & (s < direction * (tf - t0))]
        want = np.unique(np.concatenate([[t0], inner, [tf]]))
        want = want if direction > 0 else want[::-1]
        for every in (None, 2, 100):
            grid, save = _plan.sample_grid(src, t_span, None, every)
            np.testing.assert_array_equal(grid, want)
            assert grid.flags.c_contiguous and grid.dtype == np.float64
            np.testing.assert_array_equal(save, _plan._every(want.size, every))
        # with output times (on samples, between them, at the ends, shared with t0/tf):
        # np.unique of all of them, and searchsorted for where each lands
        lo, hi = min(t0, tf), max(t0, tf)
        cand = np.r_[t0, tf, src.times, 0.5 * (src.times[1:] + src.times[:-1]),
                     np.linspace(lo, hi, 7)]
        for pick in (slice(None), slice(None, None, 3), slice(1, 2)):
            te = np.unique(cand[(cand >= lo) & (cand <= hi)])[pick]
            te = te if direction > 0 else te[::-1]
            want_te = np.unique(np.concatenate([want, te]))
            want_te = want_te if direction > 0 else want_te[::-1]
            grid, save = _plan.sample_grid(src, t_span, te, None)
            np.testing.assert_array_equal(grid, want_te)
            assert grid.flags.c_contiguous and grid.dtype == np.float64
            np.testing.assert_array_equal(
                save, np.searchsorted(direction * (want_te - t0), direction * (te - t0)))
            np.testing.assert_array_equal(grid[save], te)


def test_thin_samples_declines_what_it_does_not_take():
    src = _source("linear")
    assert _plan.thin_fixed(src, (0, 1), Q0, "rk4", "sample", None, None, {}) is None
    assert _plan.thin_fixed(src, (0, 1), Q0, "rk4", "samples", None, None,
                            {"normalize": True}) is None
    assert _plan.thin_fixed(rotode.omega.Constant([1.0, 0, 0]), (0, 1), Q0, "rk4", "samples",
                            None, None, {}) is None
    assert _plan.thin_fixed(rotode.QuaternionKinematics(src, norm_gain=1.0), (0, 1), Q0, "rk4",
                            "samples", None, None, {}) is None
    assert _plan.thin_fixed(src, (0, 1), Q0, "no-such-method", "samples", None, None,
                            {}) is None
    assert _plan.thin_fixed(src, (0, 1), [0, 0, 0, 0], "rk4", "samples", None, None, {}) is None
    assert _plan.thin_fixed(src, (0, 1), Q0, "rk4", "samples", 2, None, {}, [0.5]) is None


def test_thin_samples_bad_input_raises_the_general_errors():
    src = _source("linear")
    with pytest.raises(ValueError, match="`dt` must be a positive number or 'samples'"):
        rotode.integrate(src, (0, 1), Q0, method="rk4", dt="sample")
    with pytest.raises(ValueError, match="nonzero"):
        rotode.integrate(src, (0, 1), [0, 0, 0, 0], method="rk4", dt="samples")
    with pytest.raises(ValueError, match="t_eval"):
        rotode.integrate(src, (0, 1), Q0, method="rk4", dt="samples", save_every=2, t_eval=[1])
    with pytest.raises(ValueError, match="unknown method"):
        rotode.integrate(src, (0, 1), Q0, method="rk5", dt="samples")
    with pytest.raises(ValueError, match="samples"):
        rotode.integrate(rotode.omega.Constant([1.0, 0, 0]), (0, 1), Q0, method="rk4",
                         dt="samples")


def test_thin_samples_constant_rate_is_exact():
    w = np.array([0.3, -1.1, 0.6])
    src = rotode.omega.Samples(T, np.tile(w, (T.size, 1)), kind="previous")
    res = rotode.integrate(src, (T[0], T[-1]), [1.0, 0, 0, 0], method="exp2", dt="samples")
    assert res.success and res.y.shape == (T.size, 4)     # (every sample time)
    angle = np.linalg.norm(w) * (T[-1] - T[0])
    axis = w / np.linalg.norm(w)
    exact = np.r_[np.cos(angle / 2), np.sin(angle / 2) * axis]
    np.testing.assert_allclose(res.q[-1], exact, rtol=0, atol=1e-13)
    np.testing.assert_array_equal(res.w[-1], w)


SENSITIVE = [m for m in METHODS if rotode.methods.get(m).sensitivity("kinematics", "bias")]


@pytest.mark.parametrize("frame", [None, "world"])
@pytest.mark.parametrize("method", SENSITIVE)
def test_thin_samples_sensitivities_are_the_general_ones(frame, method):
    """Gyroscope data with ``sensitivity=`` (an EKF's propagation step) takes the thin run and
    the general path's sensitivity functions on the same plan: rows, stats and every
    sensitivity to the bit, with and without t_eval, save_every, backwards, wrapped."""
    src = _source("linear", bias=[0.01, -0.02, 0.03])
    assert SENSITIVE and "exp2" in SENSITIVE
    for names in (["bias"], ["y0", "scale", "bias"]):
        for t_span, every, t_eval in CALLS:
            for model in (src, rotode.QuaternionKinematics(src, frame=frame or "body")):
                got = _plan.thin_samples_plan(model, t_span, Q0, method, "samples", every,
                                              None if model is not src else frame, {}, t_eval)
                assert got is not None
                kw = dict(method=method, dt="samples", save_every=every, t_eval=t_eval,
                          sensitivity=names)
                if model is src:
                    kw["frame"] = frame
                thin = rotode.integrate(model, t_span, Q0, **kw)
                general = rotode.integrate(model, t_span, np.asarray(Q0, float), workers=None,
                                           **kw)
                _same(thin, general)
                assert list(thin.sensitivity) == names
                for p in names:
                    assert np.array_equal(thin.sensitivity[p], general.sensitivity[p]), p


def test_thin_samples_sensitivity_bad_requests_raise_the_general_errors():
    src = _source("linear")
    with pytest.raises(ValueError, match="unknown sensitivity parameter 'omega'"):
        rotode.integrate(src, (0, 1), Q0, method="exp2", dt="samples", sensitivity=["omega"])
    with pytest.raises(ValueError, match="method 'rk4' does not support the sensitivity to "
                                         "'bias'"):
        rotode.integrate(src, (0, 1), Q0, method="rk4", dt="samples", sensitivity=["bias"])
    with pytest.raises(ValueError, match="distinct parameters"):
        rotode.integrate(src, (0, 1), Q0, method="exp2", dt="samples", sensitivity=[])
    with pytest.raises(ValueError, match="unknown method"):
        rotode.integrate(src, (0, 1), Q0, method="exp9", dt="samples", sensitivity=["bias"])
    assert _plan.thin_samples_plan(src, (0, 1), Q0, "exp2", "samples", None, None,
                                   {"normalize": True}) is None
    assert _plan.thin_samples_plan(rotode.omega.Constant([1.0, 0, 0]), (0, 1), Q0, "exp2",
                                   "samples", None, None, {}) is None
