"""Runge-Kutta-Munthe-Kaas on the specialised engine (rotode/_rkmk.hpp, the Lie-group models of
rotode/_models.hpp; docs/architecture.md, "The specialised engine").

rkmk3, rkmk5 and rkmk8 apply the pairs bs3, dopri5 and dop853 to the rotation vector v of each
step, q = qb exp(v/2) (Munthe-Kaas 1998; Hairer, Lubich & Wanner, sec. IV.8.2).  Their engine
runs are compared with the driver's own loop (``_USE_ENGINE = False``), which the golden
outputs pin: the same accepted and rejected steps, counters and values, on every compiled
torque, both inertia shapes, both kinematic frames, forwards and backwards, with t_eval (dense
output of v, then mapped), steps capped by the largest step angle, batches and threads,
failures, continued runs (``resume``) and the thin call path.
"""
import numpy as np
import pytest
import test_engine
from test_engine import check_batch_equals_single_runs

import rotode
from rotode import _codegen, dynamic, kinematic
from rotode._runplan import Plan
from rotode._validation import as_control

GROUP = tuple(dynamic.ENGINE_GROUP_PAIRS)
FULL_I = np.array([[2.0, 0.1, -0.05], [0.1, 1.5, 0.2], [-0.05, 0.2, 1.0]])
TORQUES = {
    "none": None,
    "gravity": rotode.torque.Gravity(1.3, 9.81, [0.05, -0.02, 0.4]),
    "gravity_axis": rotode.torque.Gravity(1.0, 1.0, [0.0, 0.0, 1.0]),
    "body": rotode.torque.Constant([0.1, -0.2, 0.3]),
    "world": rotode.torque.Constant([0.1, -0.2, 0.3], frame="world"),
}
SOURCES = {
    "constant": rotode.omega.Constant([0.3, -1.2, 0.7]),
    "sinusoid": rotode.omega.Sinusoid(amplitude=[1.0, 0.5, -0.8], rate=2.0,
                                      phase=[0.0, 1.0, 2.0]),
}
Y0 = np.array([0.9, 0.1, -0.2, 0.3, 1.5, -0.4, 2.0])
Q0 = np.array([0.9, 0.1, -0.2, 0.3])


def _both(module, call, *args, **kw):
    """call(*args, **kw) by the engine and by the driver's loop of `module` (dynamic or
    kinematic)."""
    out = []
    for use in (True, False):
        module._USE_ENGINE = use
        try:
            out.append(call(*args, **kw))
        finally:
            module._USE_ENGINE = True
    return out


def _same(a, b):
    test_engine._same(a, b)     # (every stats key but the adaptive lanes' set: the same bits)


def test_each_group_method_runs_the_pair_of_its_tableau():
    assert set(GROUP) == {"rkmk3", "rkmk5", "rkmk8"}
    ids = _codegen.pair_ids()
    for name, pair in _codegen.group_pair_ids().items():
        method = rotode.methods.get(name)
        (state,) = [p for p in _codegen.pairs() if ids[p.name] == pair]
        assert method.group and not state.group
        assert (method.tableau, method.embedded) == (state.tableau, state.embedded)
    assert kinematic.ENGINE_GROUP_PAIRS == dynamic.ENGINE_GROUP_PAIRS


@pytest.mark.parametrize("method", GROUP)
@pytest.mark.parametrize("torque", TORQUES)
@pytest.mark.parametrize("inertia", ["diagonal", "full"])
def test_rigid_runs_equal_the_drivers_loop(method, torque, inertia):
    inertia = np.diag([2.0, 1.5, 1.0]) if inertia == "diagonal" else FULL_I
    body = rotode.RigidBody(inertia, torque=TORQUES[torque])
    for t_span, kw in [((0.0, 7.0), {}), ((2.0, -5.0), {}),
                       ((0.0, 7.0), {"t_eval": np.linspace(0.0, 7.0, 9)}),
                       ((0.0, 7.0), {"t_eval": [1.5, 3.25], "rtol": 1e-10, "atol": 1e-12}),
                       ((0.0, 7.0), {"first_step": 0.01, "max_step": 0.3, "rtol": 1e-6})]:
        a, b = _both(dynamic, rotode.integrate, body, t_span, Y0 * 1.3, method=method, **kw)
        assert a.success
        _same(a, b)


@pytest.mark.parametrize("method", GROUP)
def test_the_step_angle_cap_and_a_fast_spin(method):
    # torque-free about a principal axis: the rate is constant, the estimate finds it exact,
    # and only the largest step angle (pi) limits the steps, which the engine must reject and
    # cap as the driver does
    body = rotode.RigidBody(np.diag([2.0, 1.5, 1.0]))
    y0 = np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 40.0])
    a, b = _both(dynamic, lambda: rotode.integrate(body, (0.0, 3.0), y0, method=method,
                                                   t_eval=np.linspace(0, 3, 13)))
    assert a.success and a.stats["n_steps"] >= 3.0 * 40.0 / np.pi
    _same(a, b)
    a, b = _both(kinematic, lambda: rotode.integrate(rotode.omega.Constant([0.0, 35.0, 1.0]),
                                                     (0.0, 2.0), Q0, method=method))
    assert a.success and a.stats["n_steps"] >= 2.0 * 35.0 / np.pi
    _same(a, b)


@pytest.mark.parametrize("method", GROUP)
def test_rigid_batches_threads_and_failures(method):
    body, y0 = check_batch_equals_single_runs(method, 1)
    _same(*_both(dynamic, lambda: rotode.integrate(body, (0, 4), y0, method=method,
                                                   rtol=1e-9, atol=1e-11)))
    for kw in ({"max_steps": 3}, {"rtol": 1e-12, "atol": 1e-300, "max_steps": 5}):
        a, b = _both(dynamic, rotode.integrate, body, (0, 50), Y0, method=method, **kw)
        assert not a.success and "max_steps" in a.message
        _same(a, b)


@pytest.mark.parametrize("method", GROUP)
@pytest.mark.parametrize("resume", [False, True])
def test_a_continued_run_starts_from_the_retraction_of_its_row(method, resume):
    body = rotode.RigidBody(np.diag([2.0, 1.5, 1.0]), torque=TORQUES["gravity"])
    y0 = np.array([Y0 * [1 + 1e-15, 1, 1, 1, 1, 1, 1]])
    t = np.array([0.0, 1.0, 2.0])
    save = np.array([0, 1, 2])
    control = as_control(1e-8, 1e-10, None, None, None, 7, 2.0)
    a, b = _both(dynamic, lambda: dynamic.run_plan(Plan(method, body, y0, t, save,
                                                        control=control, resume=resume)))
    np.testing.assert_array_equal(a.y, b.y)
    np.testing.assert_array_equal(a.w, b.w)
    assert a.stats == b.stats


@pytest.mark.parametrize("method", GROUP)
@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("frame", ["body", "world"])
def test_kinematic_runs_equal_the_drivers_loop(method, source, frame):
    for t_span, kw in [((0.0, 6.0), {}), ((1.0, -4.0), {"rtol": 1e-9, "atol": 1e-11}),
                       ((0.0, 6.0), {"t_eval": np.linspace(0.0, 6.0, 7)}),
                       ((0.0, 6.0), {"t_eval": [2.5], "first_step": 0.1, "max_step": 0.5})]:
        a, b = _both(kinematic, rotode.integrate, SOURCES[source], t_span, Q0 * 1.2,
                     method=method, frame=frame, **kw)
        assert a.success
        _same(a, b)
    rates = np.array([[0.1, 0.2, 0.3], [-1.0, 0.5, 2.0], [0.0, 0.0, 0.0]])
    q0 = np.stack([Q0, Q0[::-1], [1.0, 0, 0, 0]])
    _same(*_both(kinematic, lambda: rotode.integrate(rates, (0, 4), q0, method=method,
                                                     rtol=1e-8, t_eval=[1.0, 4.0], workers=2,
                                                     frame=frame)))


def test_the_thin_call_paths_are_the_general_ones():
    body = rotode.RigidBody(np.diag([1.0, 1.0, 0.5]), torque=TORQUES["gravity_axis"])
    for method in GROUP:
        fast = dynamic.run_single(body, (0.0, 3.0), Y0, method, 1e-8, 1e-10)
        assert fast is not None
        res = rotode.integrate(body, (0.0, 3.0), Y0, method=method, rtol=1e-8, atol=1e-10)
        general = rotode.integrate(body, (0.0, 3.0), Y0, method=method, rtol=1e-8,
                                   atol=1e-10, workers=None)      # (not the thin path)
        _same(res, general)
        np.testing.assert_array_equal(fast[1], res.y)
        for source in SOURCES.values():
            for frame in (None, "world"):
                fast = kinematic.run_single(source, (0.0, 3.0), Q0, method, 1e-8, 1e-10, frame)
                assert fast is not None
                res = rotode.integrate(source, (0.0, 3.0), Q0, method=method, rtol=1e-8,
                                       atol=1e-10, frame=frame)
                general = rotode.integrate(source, (0.0, 3.0), Q0, method=method, rtol=1e-8,
                                           atol=1e-10, frame=frame, workers=None)
                _same(res, general)
                np.testing.assert_array_equal(fast[1], res.y)
                np.testing.assert_array_equal(fast[2], res.w)


def test_python_torques_and_events_stay_in_the_drivers_loop():
    # the same results whichever flag: these runs never reach the engine
    body = rotode.RigidBody(np.diag([2.0, 1.5, 1.0]), torque=lambda t, q, w: np.zeros(3))
    _same(*_both(dynamic, lambda: rotode.integrate(body, (0, 2), Y0, method="rkmk8")))
    quarter = rotode.events.RotationAngle([1, 0, 0, 0], np.pi / 2, terminal=True)
    for module, model, y0 in [(dynamic, rotode.RigidBody(np.eye(3)), Y0),
                              (kinematic, [0.0, 0.0, 1.0], [1, 0, 0, 0])]:
        a, b = _both(module, rotode.integrate, model, (0, 10), y0, method="rkmk5",
                     rtol=1e-10, atol=1e-12, events=quarter)
        assert a.status == 1
        np.testing.assert_array_equal(a.y, b.y)
        assert a.t_stop == b.t_stop
