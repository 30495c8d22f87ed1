"""The one time-loop driver's status contract: interrupts, errors in user code, non-finite
states and capped loops are reported the same way by every runner (rotode/_driver.pyx)."""
import signal
import threading
import time
import warnings

import numpy as np
import pytest

import rotode
from rotode import methods

RUNNERS = [methods.names("kinematics", "magnus")[1], methods.names("rigid body", "cg")[-1],
           methods.names("rigid body", "implicit")[0]]


def _long_run(method, workers):
    """A run of a few seconds (if nothing stops it)."""
    n = 2000
    q0 = np.tile([1.0, 0.0, 0.0, 0.0], (n, 1))
    if method in methods.names("kinematics"):
        model, y0, t_end = np.tile([0.1, 0.2, 0.3], (n, 1)), q0, 8.0
    else:
        model = rotode.RigidBody(np.diag([1.0, 2.0, 2.5]))
        y0 = np.hstack([q0, np.tile([0.1, 1.0, 0.2], (n, 1))])
        t_end = 0.4 if method in methods.names("rigid body", "cg") else 0.5
    return lambda: rotode.integrate(model, (0.0, t_end), y0, method=method, dt=1e-4,
                                    save_every=10**7, workers=workers)


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs POSIX signals")
@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("method", RUNNERS)
def test_ctrl_c_stops_a_compiled_run_within_half_a_second(method, workers):
    assert ctrl_c_latency(_long_run(method, workers)) < 0.5


def ctrl_c_latency(run, after=0.3):
    """Seconds from a SIGINT sent `after` s into ``run()`` (which must raise KeyboardInterrupt
    for it) to the KeyboardInterrupt; Python's own handler installed meanwhile, also when this
    process was started with SIGINT ignored (a background job of a non-interactive shell)."""
    sent = []

    def interrupt():
        sent.append(time.perf_counter())
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(after, interrupt)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt), warnings.catch_warnings():
            run()
        return time.perf_counter() - sent[0]
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("error", [KeyboardInterrupt, SystemExit, ZeroDivisionError])
def test_an_exception_in_user_code_surfaces_unchanged(error):
    def w(t):
        if t > 0.05:
            raise error("from the user's w(t)")
        return np.array([0.0, 0.0, 1.0])

    with pytest.raises(error, match="from the user's"):
        rotode.integrate(w, (0, 1), [1, 0, 0, 0], method="rk4", dt=0.01)

    def tau(t, q, w):
        if t > 0.05:
            raise error("from the user's torque")
        return np.zeros(3)

    body = rotode.RigidBody(np.diag([1.0, 2.0, 2.5]), torque=tau)
    for method in RUNNERS[1:]:
        with pytest.raises(error, match="from the user's torque"):
            rotode.integrate(body, (0, 1), [1, 0, 0, 0, 0, 1, 0], method=method, dt=0.01)


def test_an_error_in_one_body_stops_the_batch():
    """The other bodies stop at their next step instead of running to the end."""
    calls = []

    def failing(t, q, w):
        raise ValueError("body 0 fails")

    def counting(t, q, w):
        calls.append(t)
        return np.zeros(3)

    bodies = [rotode.RigidBody(np.eye(3), torque=failing)] + \
        [rotode.RigidBody(np.eye(3), torque=counting)] * 3
    y0 = np.tile([1.0, 0, 0, 0, 0, 0, 1.0], (4, 1))
    with pytest.raises(ValueError, match="body 0 fails"):
        rotode.integrate(bodies, (0, 100), y0, method="rk4", dt=0.01, workers=1)
    assert len(calls) == 0          # bodies 1-3 come after body 0 on one worker: never started


@pytest.mark.parametrize("method", RUNNERS)
def test_every_runner_reports_a_non_finite_state_the_same_way(method):
    huge = 1e200
    if method in methods.names("kinematics"):
        res = rotode.integrate(rotode.omega.Constant([0.0, 0.0, 1e308]), (0, 1),
                               [1, 0, 0, 0], method="rk4", dt=0.5)
    else:
        body = rotode.RigidBody(np.diag([1.0, 2.0, 2.5]),
                                torque=lambda t, q, w: np.array([huge, huge, huge]))
        res = rotode.integrate(body, (0, 1), [1, 0, 0, 0, 0, 1, 0], method=method, dt=0.5,
                               **({"max_substeps": 10} if method in implicit_names() else {}))
    assert not res.success and res.status != 0
    assert res.message.startswith("body 0, step 0 (t = 0.0 to 0.5): ")
    assert np.isnan(res.y[-1]).all() and np.isfinite(res.y[0]).all()


def implicit_names():
    return methods.names("rigid body", "implicit")


def test_magnus_ca_sub_steps_are_capped():
    with pytest.raises(ValueError, match="MAX_SUBSTEPS"):
        rotode.integrate([0.0, 0.0, 1e12], (0, 1), [1, 0, 0, 0], method="magnus_ca", dt=0.5,
                         substep=True)
