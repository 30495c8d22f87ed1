"""The adaptive lanes on quaternion kinematics (rotode/_lanes_erk.hpp `KinStateLanes`,
`KinRkmkLanes`): bs3, dopri5, dop853 on q and rkmk3/5/8 on the rotation vector of each step, in
batches under a shared `Constant` or `Sinusoid` rate or per-body constant rates, in the body or
the world frame, each lane with its own steps and refilled from the queue, give every body its
single run's bits (rows at t_eval from the interpolant, counters, status, failures) on every
instruction set this CPU runs, with any number of threads."""
import numpy as np
import pytest
from test_simd_batch import ISAS, N, _off, _same_batch, quaternions

import rotode
from rotode import kinematic
from rotode._runplan import Plan
from rotode._validation import as_control

PAIRS = ["dop853", "dopri5", "bs3", "rkmk8", "rkmk5", "rkmk3"]
SOURCES = {
    "constant": rotode.omega.Constant([0.3, -1.2, 2.0]),
    "sinusoid": rotode.omega.Sinusoid([1.0, 0.5, 2.0], 3.0, [0.0, 0.4, 1.1]),
}


def _q0(n, seed=0):
    """Dispersed orientations (some not of unit length: the pairs on q keep their norm)."""
    return quaternions(np.random.default_rng(seed), n)


def _rates(n, seed=1):
    """Dispersed per-body rates, their sizes over a decade (the lanes' steps differ)."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 3)) * np.geomspace(0.3, 4.0, n)[:, None]


def _cases(n):
    """(name, batch model, the model of body i) of the sources the lanes compile."""
    rates = _rates(n)
    out = [(name, src, lambda i, s=src: s) for name, src in SOURCES.items()]
    out.append(("rows", rates, lambda i: rates[i]))
    return out


def _want(isa):
    # (the adaptive lanes are AVX2's 4, on AVX-512 machines too; no SSE2 instance)
    return "avx2" if isa in ("avx2", "avx512") else None


def _counts(out, i):
    keys = ("n_steps", "n_rejected", "nfev")
    if "per_body" in out.stats:
        return [int(out.stats["per_body"][key][i]) for key in keys]
    return [int(out.stats[key]) for key in keys]


@pytest.mark.parametrize("isa", ISAS, indirect=True)
@pytest.mark.parametrize("method", PAIRS + ["magnus8", "magnus6"])
@pytest.mark.parametrize("workers", [1, 2])
def test_every_body_is_its_single_run(isa, method, workers):
    """Each body's rows at t_eval (inside the span and at its ends), counters and status are
    its single run's, forward and backward, in both frames (also the adaptive Magnus methods'
    lanes, rotode/_lanes_magnus.hpp: tests/test_simd_magnus_adaptive.py)."""
    q0 = _q0(N)
    t_eval = np.linspace(0.0, 1.5, 11)
    for name, model, one in _cases(N):
        for frame in ("body", "world"):
            for span, rows in (((0.0, 1.5), t_eval), ((1.5, 0.0), t_eval[::-1])):
                kw = dict(method=method, rtol=1e-8, atol=1e-10, t_eval=rows, frame=frame)
                batch = rotode.integrate(model, span, q0, workers=workers, **kw)
                assert batch.success and batch.stats.get("simd") == _want(isa), (name, frame)
                for i in (0, 1, 2, 5, 16, N - 2, N - 1):
                    single = rotode.integrate(one(i), span, q0[i], **kw)
                    assert np.array_equal(batch.t, single.t)
                    assert np.array_equal(batch.y[i], single.y), (name, frame, i)
                    assert np.array_equal(batch.w[i], single.w), (name, frame, i)
                    assert _counts(batch, i) == _counts(single, 0), (name, frame, i)


@pytest.mark.parametrize("isa", ISAS, indirect=True)
@pytest.mark.parametrize("method", PAIRS + ["magnus8", "magnus6"])
def test_widths_agree_with_one_body_at_a_time(isa, method):
    """Every width gives the bits of "off" (the specialised engine's run of one body at a
    time): the rows at t0 and tf, a first step given, and failures (a body out of steps, one
    whose rate overflows the state: its status, NaN rows, where it stopped, its counters)."""
    q0 = _q0(N, seed=3)
    rates = _rates(N, seed=4)
    bad = rates.copy()
    bad[6] = 1e300                        # the state overflows: nonfinite or too small a step
    bad[11] *= 60.0                       # many steps: max_steps
    for model, kw in ((rates, {"first_step": 1e-3}), (bad, {"max_steps": 40}),
                      (SOURCES["sinusoid"], {"max_step": 0.05})):
        for frame in ("body", "world"):
            run = dict(method=method, rtol=1e-7, atol=1e-9, frame=frame, **kw)
            got = rotode.integrate(model, (0.0, 2.0), q0, **run)
            ref = _off(isa, rotode.integrate, model, (0.0, 2.0), q0, **run)
            _same_batch(got, ref)
            assert got.stats["message"] == ref.stats["message"]
            if model is bad:
                assert not got.success and np.isnan(got.y[6, -1]).all()


@pytest.mark.parametrize("isa", ISAS, indirect=True)
@pytest.mark.parametrize("method", ["rkmk8", "rkmk5", "rkmk3"])
@pytest.mark.parametrize("workers", [1, 2])
def test_rkmk_large_steps(isa, method, workers):
    """Fast rates at loose tolerances: steps that rotate by more than 1 and 2 rad (exp(v/2),
    T(v)'s coefficients and dexp^-1's beyond their polynomial ranges, lane by lane with the
    scalar functions), trials past the largest step angle (rejected, the next step capped):
    one body at a time's bits."""
    q0 = _q0(N, seed=5)
    rates = _rates(N, seed=6) * 3.0
    t_eval = np.linspace(0.0, 3.0, 7)
    for model in (rates, rotode.omega.Sinusoid([6.0, 3.0, 9.0], 0.7, [0.0, 0.4, 1.1])):
        for frame in ("body", "world"):
            for rtol in (1e-2, 1e-6):
                kw = dict(method=method, rtol=rtol, atol=1e-6, t_eval=t_eval, frame=frame,
                          workers=workers)
                got = rotode.integrate(model, (0.0, 3.0), q0, **kw)
                ref = _off(isa, rotode.integrate, model, (0.0, 3.0), q0, **kw)
                assert got.success and got.stats.get("simd") == _want(isa)
                _same_batch(got, ref)
                if rtol == 1e-2 and model is rates:
                    assert ref.stats["per_body"]["n_rejected"].sum() > 0


@pytest.mark.parametrize("isa", ISAS, indirect=True)
@pytest.mark.parametrize("method", ["rkmk8", "rkmk3"])
@pytest.mark.parametrize("resume", [False, True])
def test_rkmk_lanes_continue_a_run(isa, method, resume):
    """A continued rkmk run (`Plan.resume`: each body's base its row retracted) in lanes gives
    one body at a time's bits."""
    q0 = _q0(N, seed=7)
    q0 /= np.linalg.norm(q0, axis=1)[:, None]
    q0[:, 0] *= 1.0 + 1e-15
    t = np.array([0.0, 0.5, 1.0])
    save = np.array([0, 1, 2])
    control = as_control(1e-8, 1e-10, None, None, None, 4, 1.0)
    for model in (_rates(N, seed=8), SOURCES["sinusoid"]):
        plan = Plan(method, model, q0, t, save, control=control, resume=resume)
        got = kinematic.run_plan(plan)
        ref = _off(isa, kinematic.run_plan, plan)
        assert np.array_equal(got.y, ref.y) and np.array_equal(got.w, ref.w)
        assert got.stats["status"] == ref.stats["status"] == 0
        assert got.stats.get("simd") == _want(isa)
        for key in ref.stats["per_body"]:
            assert np.array_equal(got.stats["per_body"][key], ref.stats["per_body"][key]), key


@pytest.mark.parametrize("isa", ISAS, indirect=True)
def test_what_the_lanes_do_not_take_runs_body_by_body(isa):
    """The norm gain (not in the lanes' class), a batch of two (under half the lanes) and a
    rate with no compiled model (samples) run one body at a time: the same bits as "off", no
    lanes reported."""
    q0 = _q0(N, seed=9)
    gain = rotode.QuaternionKinematics(SOURCES["constant"], norm_gain=0.5)
    samples = rotode.omega.Samples([0.0, 0.5, 1.0, 1.5], [[0.0, 0.0, 1.0]] * 4, kind="linear")
    for model, states in ((gain, q0), (SOURCES["sinusoid"], q0[:2]), (samples, q0)):
        kw = dict(method="dop853", rtol=1e-8, atol=1e-10)
        got = rotode.integrate(model, (0.0, 1.5), states, **kw)
        ref = _off(isa, rotode.integrate, model, (0.0, 1.5), states, **kw)
        assert got.success and got.stats.get("simd") in (None, "scalar")
        assert np.array_equal(got.y, ref.y) and np.array_equal(got.w, ref.w)
