"""The contract every registered method keeps (issue "Reliability", "make it a contract"): a
method gets all of it by being registered in rotode.methods.  Batched runs equal single runs
bit for bit whatever the thread count; inputs may be read-only or non-contiguous and are not
written; results do not depend on call history; an exception in user code surfaces in the
caller; bad input gets a clear exception; a non-finite state fails the run with a message."""
import pickle

import numpy as np
import pytest

import rotode
from rotode import methods

W = rotode.omega.Sinusoid(amplitude=np.pi / 2, rate=2 * np.pi / 10,
                          phase=[0, 2 * np.pi / 3, 4 * np.pi / 3])
TOP = rotode.RigidBody([1.0, 1.0, 0.5], torque=rotode.torque.Gravity(1.0, 1.0, [0, 0, 1]))
CASES = [(name, kind) for kind in methods.MODELS for name in methods.names(kind)]
# workers=4 on a smaller machine is clamped with a warning (tests/test_reliability.py)
pytestmark = pytest.mark.filterwarnings("ignore:`workers`=4 is more than")


def _run(name, kind, model, y0, **kw):
    step = {"rtol": 1e-8} if methods.get(name).adaptive else {"dt": 0.05}
    step.update(kw)
    return rotode.integrate(model, (0, 2), y0, method=name, **step)


def _model_and_states(kind, n=5):
    rng = np.random.default_rng(8)
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    if kind == "kinematics":
        return W, q
    return TOP, np.c_[q, rng.normal(size=(n, 3)) * [1.0, 1.0, 2.0]]


@pytest.mark.parametrize("name, kind", CASES)
def test_batch_equals_single_runs_for_any_thread_count(name, kind):
    model, y0 = _model_and_states(kind)
    singles = [_run(name, kind, model, y) for y in y0]
    for workers in (1, 2, 4):
        batch = _run(name, kind, model, y0, workers=workers)
        for i, one in enumerate(singles):
            np.testing.assert_array_equal(batch.y[i], one.y)


@pytest.mark.parametrize("name, kind", CASES)
def test_read_only_and_strided_inputs_are_accepted_and_not_written(name, kind):
    model, y0 = _model_and_states(kind, 3)
    ref = _run(name, kind, model, y0)
    ro = y0.copy()
    ro.flags.writeable = False
    strided = np.asfortranarray(np.repeat(y0, 2, axis=0)[::2])     # non-contiguous rows
    for arg in (ro, strided):
        before = np.array(arg, copy=True)
        np.testing.assert_array_equal(_run(name, kind, model, arg).y, ref.y)
        np.testing.assert_array_equal(arg, before)


@pytest.mark.parametrize("name, kind", CASES)
def test_results_do_not_depend_on_call_history(name, kind):
    model, y0 = _model_and_states(kind, 2)
    first = _run(name, kind, model, y0[0])
    _run(name, kind, model, y0[1])                                  # something else between
    np.testing.assert_array_equal(_run(name, kind, model, y0[0]).y, first.y)


class Boom(Exception):
    pass


@pytest.mark.parametrize("name, kind", CASES)
@pytest.mark.parametrize("workers", [1, 2])
def test_an_exception_in_user_code_surfaces_in_the_caller(name, kind, workers):
    def w(t):
        if t > 0.5:
            raise Boom("user code")
        return [0.1, 0.2, 0.3]

    def torque(t, q, w_body):
        if t > 0.5:
            raise Boom("user code")
        return [0.0, 0.0, 0.1]

    _, y0 = _model_and_states(kind, 4)
    model = w if kind == "kinematics" else rotode.RigidBody([1.0, 1.0, 0.5], torque=torque)
    with pytest.raises(Boom, match="user code"):
        _run(name, kind, model, y0, workers=workers)


@pytest.mark.parametrize("name, kind", CASES)
def test_bad_input_gets_a_clear_exception(name, kind):
    model, y0 = _model_and_states(kind, 1)
    bad = y0[0].copy()
    bad[1] = np.nan
    with pytest.raises(ValueError, match="y0"):
        _run(name, kind, model, bad)
    with pytest.raises(ValueError, match="y0"):
        _run(name, kind, model, y0[0][:3])
    with pytest.raises(TypeError, match="y0|real"):
        _run(name, kind, model, y0[0].astype(complex))
    with pytest.raises(ValueError, match="t_span"):
        rotode.integrate(model, (0, np.inf), y0[0], method=name,
                         **({"rtol": 1e-6} if methods.get(name).adaptive else {"dt": 0.1}))
    with pytest.raises(TypeError, match="option"):
        _run(name, kind, model, y0[0], no_such_option=1)


@pytest.mark.parametrize("name, kind", CASES)
def test_a_non_finite_state_fails_the_run_with_a_message(name, kind):
    if kind == "kinematics":
        model, y0 = rotode.omega.Constant([0.0, 0.0, 1e308]), [1.0, 0, 0, 0]
    else:
        model = rotode.RigidBody([1.0, 1.0, 0.5], torque=rotode.torque.Constant([1e308, 0, 0]))
        y0 = [1.0, 0, 0, 0, 0.0, 0.0, 1.0]
    try:
        res = _run(name, kind, model, y0, **({"max_steps": 2000}
                                               if methods.get(name).adaptive else {}))
    except ValueError as exc:                 # magnus_ca refuses such a step before taking it
        assert "magnus_ca" in str(exc)
        return
    assert not res.success and res.status not in (0, 1)
    assert "body 0" in res.message
    assert not np.isfinite(res.y[-1]).all()


@pytest.mark.parametrize("obj", [
    W, TOP, rotode.RigidBody([2.5, 1.4, 1.3]), rotode.QuaternionKinematics(W, frame="world"),
    rotode.omega.Constant([0.1, 0.2, 0.3]),
    rotode.omega.Samples(np.linspace(0, 1, 11), np.ones((11, 3)), kind="cubic", offset=0.01),
    rotode.torque.Gravity(2.0, 9.81, [0, 0, 0.3]), rotode.torque.Constant([0, 0, 1.0]),
    rotode.events.AxisAngle([0, 0, 1], [0, 0, 1], 0.5, terminal=True),
], ids=lambda o: type(o).__name__)
def test_models_sources_and_events_pickle(obj):
    back = pickle.loads(pickle.dumps(obj))
    assert type(back) is type(obj)
    if isinstance(obj, rotode.omega.AngularVelocity):
        np.testing.assert_array_equal(back(0.37), obj(0.37))
    if isinstance(obj, (rotode.RigidBody, rotode.QuaternionKinematics)):
        y = np.r_[1.0, 0, 0, 0, 0.3, 0.2, 0.1][:7 if isinstance(obj, rotode.RigidBody) else 4]
        np.testing.assert_array_equal(back(0.37, y), obj(0.37, y))
