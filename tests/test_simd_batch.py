"""The lane kernels (rotode/_lanes.hpp, rotode._lanes): rk3, rk4 and ab3 batches of rigid bodies
stepped in SIMD lanes, and the error-controlled pairs in the adaptive lanes
(rotode/_lanes_erk.hpp), on the state and as Runge-Kutta-Munthe-Kaas methods (rkmk3/5/8), give
every body its single run's bits, on every instruction set this CPU runs, with any number of
threads; the forced set is the one that ran."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import rotode
from rotode import _lanes, dynamic
from rotode._runplan import Plan
from rotode._validation import as_control

ROOT = Path(__file__).resolve().parents[1]
N = 37                                    # not a multiple of any width (2, 4, 8)
ISAS = [name for name in _lanes.available() if name != "off"]


def quaternions(rng, n):
    """n dispersed orientations from `rng`, a few of them not of unit length (the norm gain's
    term; also tests/test_simd_kinematics.py)."""
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1)[:, None]
    q[::5] *= 1.0 + 1e-3
    return q


def _states(n, seed=0):
    """Dispersed initial states: random orientations (non-unit q too) and rates."""
    rng = np.random.default_rng(seed)
    q = quaternions(rng, n)
    w = rng.normal(size=(n, 3)) * 3.0
    w[:, 2] += 15.0                       # spinning tops
    return np.hstack([q, w])


def _inertia(n, seed=1):
    rng = np.random.default_rng(seed)
    return np.column_stack([np.ones(n), 1.0 + 0.2 * rng.random(n), 0.4 + 0.2 * rng.random(n)])


def _models(n):
    """Batches of rigid bodies, one per torque kind the compiled model has, with per-body
    parameters (inertia, torque), and the shared Lagrange top of the issue."""
    rng = np.random.default_rng(2)
    inertia = _inertia(n)
    heights = np.column_stack([np.zeros(n), np.zeros(n), 0.05 + 0.1 * rng.random(n)])
    return {
        "free": rotode.RigidBody(inertia),
        "top": rotode.RigidBody([1.0, 1.0, 0.5],
                                torque=rotode.torque.Gravity(1.0, 9.81, [0, 0, 0.1])),
        "gravity axis": rotode.RigidBody(inertia, torque=rotode.torque.Gravity(1.0, 9.81, heights)),
        "gravity": rotode.RigidBody(inertia, torque=rotode.torque.Gravity(
            1.0 + rng.random(n), 9.81, 0.1 * rng.normal(size=(n, 3)))),
        "body torque": rotode.RigidBody(
            inertia, torque=rotode.torque.Constant(rng.normal(size=(n, 3)))),
        "world torque": rotode.RigidBody(
            inertia, torque=rotode.torque.Constant(rng.normal(size=(n, 3)), frame="world")),
        "full inertia, gain": rotode.RigidBody(
            np.array([[[2.0, 0.1, 0.0], [0.1, 1.5, 0.05], [0.0, 0.05, 1.0]]] * n)
            * (1.0 + 0.1 * rng.random(n))[:, None, None], norm_gain=0.5),
        "no gyroscopic": rotode.RigidBody(inertia, gyroscopic=False),
    }


def _body(model, i):
    return model if model.n_bodies is None else model[i]


def _batch_is_its_single_runs(isa, method, workers, y0):
    """Every model of `_models`: the batch ran in lanes of `isa`, and bodies across its blocks
    equal their single runs (rows, rates, torque evaluations) bit for bit."""
    for name, model in _models(N).items():
        batch = rotode.integrate(model, (0.0, 0.37), y0, method=method, dt=0.01, save_every=7,
                                 workers=workers)
        assert batch.success and batch.stats["simd"] == isa, name
        for i in (0, 1, 2, 5, 8, 16, N - 2, N - 1):
            one = rotode.integrate(_body(model, i), (0.0, 0.37), y0[i], method=method, dt=0.01,
                                   save_every=7)
            assert np.array_equal(batch.y[i], one.y), (name, i)
            assert np.array_equal(batch.w[i], one.w), (name, i)
            assert batch.stats["nfev"] == one.stats["nfev"]


@pytest.mark.parametrize("isa", ISAS, indirect=True)
@pytest.mark.parametrize("method", ["rk4", "rk3", "ab3"])
@pytest.mark.parametrize("workers", [1, 2])
def test_every_body_is_its_single_run(isa, method, workers):
    y0 = _states(N)
    _batch_is_its_single_runs(isa, method, workers, y0)


@pytest.mark.parametrize("isa", ISAS, indirect=True)
def test_widths_agree_with_the_drivers_step(isa):
    """Every width gives the bits of the driver's one-body step (rotode/dynamic.pxd), t_eval
    rows, `normalize` and a backward grid included."""
    y0 = _states(N, seed=3)
    t_eval = np.linspace(0.0, 0.5, 11)
    for name, model in _models(N).items():
        kw = dict(method="rk4", dt=0.013, t_eval=t_eval, normalize=True)
        lanes = rotode.integrate(model, (0.0, 0.5), y0, **kw)
        back = rotode.integrate(model, (0.5, 0.0), y0, method="rk3", dt=0.02)
        _lanes.use("off")
        try:
            ref = rotode.integrate(model, (0.0, 0.5), y0, **kw)
            ref_back = rotode.integrate(model, (0.5, 0.0), y0, method="rk3", dt=0.02)
        finally:
            _lanes.use(isa)
        assert "simd" not in ref.stats and lanes.stats["simd"] == isa
        assert np.array_equal(lanes.t, ref.t) and np.array_equal(lanes.y, ref.y), name
        assert np.array_equal(lanes.w, ref.w) and np.array_equal(back.y, ref_back.y), name
        assert lanes.stats["nfev"] == ref.stats["nfev"] == 4 * ref.stats["n_steps"]


def _mixed_bodies(n):
    """n bodies of two torque classes (free; a top under gravity every third), one block."""
    return [rotode.RigidBody([1.0, 1.2, 0.5]) if i % 3 else
            rotode.RigidBody([1.0, 1.0, 0.5], torque=rotode.torque.Gravity(1.0, 9.81, [0, 0, 0.1]))
            for i in range(n)]


@pytest.mark.parametrize("isa", ISAS, indirect=True)
def test_mixed_classes_and_a_failing_body(isa):
    """Bodies of different torque kinds in one block run one at a time (the same bits); a body
    whose state overflows fails alone, its rows NaN, the others' unchanged."""
    y0 = _states(N, seed=4)
    mixed = _mixed_bodies(N)
    out = rotode.integrate(mixed, (0.0, 0.2), y0, method="rk4", dt=0.01)
    for i in (0, 1, 3, N - 1):
        one = rotode.integrate(mixed[i], (0.0, 0.2), y0[i], method="rk4", dt=0.01)
        assert np.array_equal(out.y[i], one.y)
    bad = y0.copy()
    bad[6, 4:] = 1e154
    model = rotode.RigidBody([1.0, 2.0, 3.0])
    out = rotode.integrate(model, (0.0, 1.0), bad, method="rk4", dt=0.01, save_every=10)
    assert out.stats["status"] == 2 and "body 6" in out.stats["message"]
    assert np.isnan(out.y[6, -1]).all() and np.isfinite(np.delete(out.y, 6, axis=0)).all()
    one = rotode.integrate(model, (0.0, 1.0), bad[7], method="rk4", dt=0.01, save_every=10)
    assert np.array_equal(out.y[7], one.y)


@pytest.mark.parametrize("isa", ISAS, indirect=True)
def test_ab3_agrees_with_the_drivers_step(isa):
    """ab3 (Kutta's two steps, then the variable-step Adams-Bashforth weights of the grid) gives
    the bits of the driver's one-body step on an uneven grid, with `normalize`, and a body that
    overflows fails alone with the driver's status, rows and counters."""
    y0 = _states(N, seed=5)
    grid = np.cumsum(np.r_[0.0, 0.004 + 0.01 * np.random.default_rng(6).random(60)])
    save = np.array([0, 1, 2, 3, 17, 40, 60])
    bad = y0.copy()
    bad[9, 4:] = 1e154
    for name, model in _models(N).items():
        for states, opts in ((y0, {"normalize": True}), (bad, {})):
            got = dynamic.run("ab3", model, states, grid, save, opts)
            _lanes.use("off")
            try:
                ref = dynamic.run("ab3", model, states, grid, save, opts)
            finally:
                _lanes.use(isa)
            assert got[2]["simd"] == isa and "simd" not in ref[2], name
            assert np.array_equal(got[0], ref[0], equal_nan=True), name
            assert np.array_equal(got[1], ref[1], equal_nan=True), name
            assert got[2]["status"] == ref[2]["status"] and got[2]["nfev"] == ref[2]["nfev"]
            # (the steps a message names depend on the thread's timed polling chunks)
            assert ("body 9, step" in got[2]["message"]) == (states is bad), name


PAIRS = ["dop853", "dopri5", "bs3", "rkmk8", "rkmk5", "rkmk3"]   # (rkmk: the pairs on [v, w])


def _lanes_run(model):
    """Whether a batch of `model` runs in the adaptive lanes (no norm gain)."""
    return model.norm_gain == 0.0 if np.ndim(model.norm_gain) == 0 else False


def _counts(out, i):
    """A body's counters: the batch's per-body ones, a single run's own."""
    keys = ("n_steps", "n_rejected", "nfev_pair", "nfev")
    if "per_body" in out.stats:
        return [int(out.stats["per_body"][key][i]) for key in keys]
    return [int(out.stats[key]) for key in keys]


def _same_run(batch, i, one):
    assert np.array_equal(batch.t, one.t)
    assert np.array_equal(batch.y[i], one.y, equal_nan=True)
    assert np.array_equal(batch.w[i], one.w, equal_nan=True)
    assert _counts(batch, i) == _counts(one, 0)


@pytest.mark.parametrize("isa", ISAS, indirect=True)
@pytest.mark.parametrize("method", PAIRS)
@pytest.mark.parametrize("workers", [1, 2])
def test_adaptive_every_body_is_its_single_run(isa, method, workers):
    """The pairs in lanes, each lane its own steps (dispersed rates: the lanes accept, reject
    and end at different times, refilled from the queue): every body's rows at t_eval, counters
    and status are its single run's, on a forward and a backward span."""
    y0 = _states(N, seed=7)
    y0[:, 4:] *= np.linspace(0.3, 2.0, N)[:, None]
    t_eval = np.linspace(0.0, 0.6, 13)
    for name, model in _models(N).items():
        for span, rows in (((0.0, 0.6), t_eval), ((0.6, 0.0), t_eval[::-1])):
            kw = dict(method=method, rtol=1e-8, atol=1e-10, t_eval=rows)
            batch = rotode.integrate(model, span, y0, workers=workers, **kw)
            # (the adaptive lanes are AVX2's 4, on AVX-512 machines too; no SSE2 instance)
            want = "avx2" if isa in ("avx2", "avx512") and _lanes_run(model) else None
            assert batch.success and batch.stats.get("simd") == want, name
            for i in (0, 1, 2, 5, 8, 16, N - 2, N - 1):
                _same_run(batch, i, rotode.integrate(_body(model, i), span, y0[i], **kw))


@pytest.mark.parametrize("isa", ISAS, indirect=True)
@pytest.mark.parametrize("method", PAIRS)
def test_adaptive_widths_agree_with_one_body_at_a_time(isa, method):
    """Every width gives the bits of "off" (the specialised engine's run of one body at a time),
    the rows at t0 and tf (no t_eval), with a body whose state overflows, one that
    runs out of steps and one whose step becomes too small: their status, NaN rows, where they
    stopped and their counters too."""
    y0 = _states(N, seed=8)
    y0[:, 4:] *= np.linspace(0.3, 2.0, N)[:, None]
    bad = y0.copy()
    bad[6, 4:] = 1e154                    # overflows: nonfinite or step too small
    bad[11, 4:] *= 40.0                   # many steps: max_steps
    args = (0.0, 0.4)
    for name, model in _models(N).items():
        for states, kw in ((y0, {"first_step": 1e-3}), (bad, {"max_steps": 60})):
            run = dict(method=method, rtol=1e-7, atol=1e-9, **kw)
            got = rotode.integrate(model, args, states, **run)
            _lanes.use("off")
            try:
                ref = rotode.integrate(model, args, states, **run)
            finally:
                _lanes.use(isa)
            assert "simd" not in ref.stats and got.stats["status"] == ref.stats["status"], name
            assert got.stats["message"] == ref.stats["message"], name
            assert np.array_equal(got.t, ref.t) and np.array_equal(got.y, ref.y, equal_nan=True)
            assert np.array_equal(got.w, ref.w, equal_nan=True), name
            for key in ref.stats["per_body"]:
                assert np.array_equal(got.stats["per_body"][key], ref.stats["per_body"][key])
            if states is bad:
                assert not got.success and np.isnan(got.y[6, -1]).all(), name


def test_choices():
    assert _lanes.available()[:3] == ("off", "scalar", "sse2")
    assert [_lanes.width(name) for name in _lanes.ISAS] == [0, 1, 2, 4, 8]
    assert _lanes.get() in _lanes.available()
    with pytest.raises(ValueError, match="instruction set must be one of"):
        _lanes.use("neon")
    with pytest.raises(ValueError, match="instruction set must be one of"):
        _lanes.width("avx")
    before = _lanes.use("off")
    try:
        out = rotode.integrate(rotode.RigidBody([1.0, 2.0, 3.0]), (0, 1), _states(3), method="rk4",
                               dt=0.1)
        assert "simd" not in out.stats
    finally:
        _lanes.use(before)


def test_python_torque_keeps_the_drivers_step():
    """A torque with no compiled model (a callable) takes the driver's step: no lanes."""
    model = rotode.RigidBody([1.0, 2.0, 3.0], torque=lambda t, q, w: np.zeros(3))
    out = rotode.integrate(model, (0, 0.1), _states(4), method="rk4", dt=0.05)
    assert out.success and "simd" not in out.stats


@pytest.mark.parametrize("value, expected", [("scalar", "scalar"), ("off", "off"),
                                             ("neon", None)])
def test_environment_variable(value, expected):
    """ROTODE_SIMD chooses the set when rotode is imported; one this CPU cannot run warns and
    leaves the best."""
    code = ("import warnings; warnings.simplefilter('always')\n"
            "from rotode import _lanes; print(_lanes.get())")
    env = dict(os.environ, ROTODE_SIMD=value, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=True)
    got = done.stdout.split()[-1]
    if expected is None:
        assert got == _lanes.available()[-1] and "ROTODE_SIMD='neon'" in done.stderr
    else:
        assert got == expected and not done.stderr


def _off(isa, call, *args, **kw):
    """call(*args, **kw) with the lanes off (each body by the specialised engine alone), then
    `isa` again."""
    _lanes.use("off")
    try:
        return call(*args, **kw)
    finally:
        _lanes.use(isa)


def _same_batch(got, ref):
    assert got.stats["status"] == ref.stats["status"] and "simd" not in ref.stats
    assert np.array_equal(got.t, ref.t) and np.array_equal(got.y, ref.y, equal_nan=True)
    assert np.array_equal(got.w, ref.w, equal_nan=True)
    for key in ref.stats["per_body"]:
        assert np.array_equal(got.stats["per_body"][key], ref.stats["per_body"][key]), key


@pytest.mark.parametrize("isa", ISAS, indirect=True)
@pytest.mark.parametrize("method", ["rkmk8", "rkmk5", "rkmk3"])
@pytest.mark.parametrize("workers", [1, 2])
def test_rkmk_lanes_take_the_large_steps_of_one_body(isa, method, workers):
    """Fast spins at loose tolerances: steps that rotate by more than 2 rad (exp(v/2) beyond its
    Taylor range and dexp^-1's coefficient beyond its series, which the lanes take lane by lane
    with the scalar sine and cosine), trials beyond the largest step angle (rejected, the next
    step capped), the lanes' bases re-anchored at different steps: the bits of one body at a
    time, rows from the interpolant included."""
    y0 = _states(N, seed=9)
    y0[:, 4:] *= np.linspace(0.5, 3.0, N)[:, None]
    t_eval = np.linspace(0.0, 2.0, 9)
    for name in ("free", "top", "gravity", "world torque"):
        model = _models(N)[name]
        for rtol in (1e-2, 1e-5):
            kw = dict(method=method, rtol=rtol, atol=1e-6, t_eval=t_eval, workers=workers)
            got = rotode.integrate(model, (0.0, 2.0), y0, **kw)
            ref = _off(isa, rotode.integrate, model, (0.0, 2.0), y0, **kw)
            assert got.success and got.stats.get("simd") == (
                "avx2" if isa in ("avx2", "avx512") else None), name
            _same_batch(got, ref)
            if rtol == 1e-2:
                assert ref.stats["per_body"]["n_rejected"].sum() > 0


@pytest.mark.parametrize("isa", ISAS, indirect=True)
@pytest.mark.parametrize("method", ["rkmk8", "rkmk3"])
@pytest.mark.parametrize("resume", [False, True])
@pytest.mark.parametrize("fixed", [False, True])
def test_rkmk_lanes_continue_a_run(isa, method, resume, fixed):
    """A continued rkmk run (`Plan.resume`: each body's base its row retracted) in lanes gives
    one body at a time's bits: under error control (the adaptive lanes) and at fixed steps
    (the pairs' fixed-grid lanes, against the driver's `_erk_fixed`)."""
    model = _models(N)["gravity"]
    y0 = _states(N, seed=10)
    y0[:, 0] *= 1.0 + 1e-15
    if fixed:
        plan = Plan(method, model, y0, np.linspace(0.0, 0.5, 26), np.array([0, 5, 25]),
                    resume=resume)
    else:
        plan = Plan(method, model, y0, np.array([0.0, 0.5, 1.0]), np.array([0, 1, 2]),
                    control=as_control(1e-8, 1e-10, None, None, None, 7, 1.0), resume=resume)
    got = dynamic.run_plan(plan)
    ref = _off(isa, dynamic.run_plan, plan)
    assert np.array_equal(got.y, ref.y) and np.array_equal(got.w, ref.w)
    assert got.stats["status"] == ref.stats["status"] == 0
    want = "avx2" if isa in ("avx2", "avx512") else ("scalar" if fixed else None)
    assert got.stats.get("simd") == want and "simd" not in ref.stats
    for key in ("per_body",) if not fixed else ():
        for name in ref.stats[key]:
            assert np.array_equal(got.stats[key][name], ref.stats[key][name]), name
    assert np.array_equal(got.stats["nfev"], ref.stats["nfev"])


GROUP = ["lie_euler", "cg1", "cg2", "cg3"]     # (the rigid body's Lie-group kernels in lanes)


@pytest.mark.parametrize("isa", ISAS, indirect=True)
@pytest.mark.parametrize("method", GROUP)
@pytest.mark.parametrize("workers", [1, 2])
def test_group_every_body_is_its_single_run(isa, method, workers):
    """Lie-Euler and the Crouch-Grossman methods in lanes (q0 exp(h W/2) ..., the exponential's
    Taylor range in vectors, beyond it the scalar sine and cosine lane by lane): every body's
    rows, rates and torque evaluations are its single run's, for every compiled torque kind,
    diagonal and full inertia, with and without the norm gain (which these methods do not read:
    one class)."""
    y0 = _states(N, seed=11)
    _batch_is_its_single_runs(isa, method, workers, y0)


def _group_models(n):
    """`_models` and a batch mixing bodies with and without the norm gain."""
    models = _models(n)
    models["some gains"] = [rotode.RigidBody(inertia, norm_gain=0.0 if i % 3 == 0 else 0.7)
                            for i, inertia in enumerate(_inertia(n))]
    return models


@pytest.mark.parametrize("isa", ISAS, indirect=True)
@pytest.mark.parametrize("method", GROUP)
def test_group_widths_agree_with_the_drivers_step(isa, method):
    """Every width gives the bits of the driver's one-body step (rotode/dynamic.pxd
    `lie_euler_step`, `cg_step`): t_eval rows, a backward grid, steps long enough that
    |h w / 2| > 1 in some lanes of a block and not in others, and a body whose state overflows
    (it fails alone with the driver's status, NaN rows and counters)."""
    y0 = _states(N, seed=12)
    y0[:, 4:] *= np.linspace(0.2, 2.0, N)[:, None]
    bad = y0.copy()
    bad[9, 4:] = 1e160                    # (|h w / 2|^2 overflows too: no gyroscopic term)
    t_eval = np.linspace(0.0, 0.5, 11)
    grid = np.cumsum(np.r_[0.0, 0.004 + 0.01 * np.random.default_rng(13).random(60)])
    save = np.array([0, 1, 2, 3, 17, 40, 60])
    for name, model in _group_models(N).items():
        calls = [(rotode.integrate, (model, (0.0, 0.5), y0),
                  dict(method=method, dt=0.013, t_eval=t_eval)),
                 (rotode.integrate, (model, (0.5, 0.0), y0), dict(method=method, dt=0.02)),
                 (rotode.integrate, (model, (0.0, 1.2), y0), dict(method=method, dt=0.1)),
                 (rotode.integrate, (model, (0.0, 0.5), bad),
                  dict(method=method, dt=0.01, save_every=10))]
        for call, args, kw in calls:
            got = call(*args, **kw)
            ref = _off(isa, call, *args, **kw)
            assert got.stats["simd"] == isa and "simd" not in ref.stats, name
            assert got.stats["status"] == ref.stats["status"], name
            assert got.stats["nfev"] == ref.stats["nfev"], name
            assert np.array_equal(got.t, ref.t), name
            assert np.array_equal(got.y, ref.y, equal_nan=True), name
            assert np.array_equal(got.w, ref.w, equal_nan=True), name
            if args[2] is bad:          # (dt 0.1: some explicit steps of fast bodies diverge)
                assert got.stats["status"] == 2 and "body 9" in got.stats["message"], name
                assert np.isnan(got.y[9, -1]).all(), name
                assert np.isfinite(np.delete(got.y, 9, axis=0)).all(), name
        got = dynamic.run(method, model, bad, grid, save)
        ref = _off(isa, dynamic.run, method, model, bad, grid, save)
        assert got[2]["simd"] == isa and "simd" not in ref[2], name
        assert np.array_equal(got[0], ref[0], equal_nan=True), name
        assert np.array_equal(got[1], ref[1], equal_nan=True), name
        assert got[2]["status"] == ref[2]["status"] and got[2]["nfev"] == ref[2]["nfev"]
        for key in ref[2]["per_body"]:
            assert np.array_equal(got[2]["per_body"][key], ref[2]["per_body"][key]), key


@pytest.mark.parametrize("isa", ISAS, indirect=True)
def test_group_small_batches_mixed_classes_and_the_drivers_options(isa):
    """Batches too small to fill a block run body by body ("scalar"); bodies of different
    torque kinds in one block run one at a time; a registered Crouch-Grossman tableau (exp2's)
    runs in lanes too; `restore_momentum` and `torque_substeps` keep the driver's step (no
    lanes), as a torque without a compiled model does."""
    y0 = _states(N, seed=14)
    model = _models(N)["gravity"]
    for n in (1, 2, 3, 5):
        few = [model[i] for i in range(n)]
        out = rotode.integrate(few, (0.0, 0.2), y0[:n], method="cg3", dt=0.01)
        ref = _off(isa, rotode.integrate, few, (0.0, 0.2), y0[:n], method="cg3", dt=0.01)
        assert np.array_equal(out.y, ref.y) and np.array_equal(out.w, ref.w)
        assert out.stats["simd"] in (isa, "scalar")
        assert (out.stats["simd"] == isa) == (2 * n > _lanes.width(isa) > 1 or isa == "scalar")
    mixed = _mixed_bodies(N)
    out = rotode.integrate(mixed, (0.0, 0.2), y0, method="lie_euler", dt=0.01)
    for i in (0, 1, 3, N - 1):
        one = rotode.integrate(mixed[i], (0.0, 0.2), y0[i], method="lie_euler", dt=0.01)
        assert np.array_equal(out.y[i], one.y)
    out = rotode.integrate(model, (0.0, 0.3), y0, method="exp2", dt=0.01)
    ref = _off(isa, rotode.integrate, model, (0.0, 0.3), y0, method="exp2", dt=0.01)
    assert out.stats["simd"] == isa and np.array_equal(out.y, ref.y)
    free = rotode.RigidBody([1.0, 2.0, 3.0])
    for opts in ({"restore_momentum": True}, {"torque_substeps": 2}):
        out = rotode.integrate(free, (0.0, 0.1), y0, method="cg2", dt=0.01, **opts)
        assert out.success and "simd" not in out.stats
    python = rotode.RigidBody([1.0, 2.0, 3.0], torque=lambda t, q, w: np.zeros(3))
    out = rotode.integrate(python, (0, 0.1), _states(4), method="cg3", dt=0.05)
    assert out.success and "simd" not in out.stats
