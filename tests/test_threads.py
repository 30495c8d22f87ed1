"""Threads: results do not depend on them, and a forked process does not hang on them.

GNU OpenMP cannot start a team of threads in a process forked from one that had started a
team; rotode's parallel loops run serially in such a child (rotode/_loops.pyx).  Without that,
each call below would wait forever in the child, which the timeout turns into a failure.
"""
import os
import signal
import time
import warnings

import numpy as np
import pytest

import rotode
from rotode import _loops, so3

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

N_BATCH = 40_000  # above the row count at which so3.exp goes parallel


def _threaded_work():
    v = np.random.default_rng(5).normal(size=(N_BATCH, 3))
    R = so3.exp(v)
    T = so3.dexp(v)
    rates = np.random.default_rng(6).normal(size=(8, 3))
    q0 = np.tile([1.0, 0.0, 0.0, 0.0], (8, 1))
    kin = rotode.integrate(rates, (0.0, 1.0), q0, method="magnus4", dt=0.01, workers=2)
    body = rotode.RigidBody([1.0, 2.0, 3.0])
    y0 = np.tile([1.0, 0.0, 0.0, 0.0, 0.3, 1.0, 0.1], (4, 1))
    dyn = rotode.integrate(body, (0.0, 1.0), y0, method="rk4", dt=0.01, workers=2)
    imp = rotode.integrate(body, (0.0, 1.0), y0, method="implicit_midpoint", dt=0.01,
                           workers=2)
    return {"R": R, "T": T, "kin": kin.y, "dyn": dyn.y, "imp": imp.y,
            "threads": np.array(_loops.threads_available())}


def _run_in_forked_child(path, timeout=60.0):
    """Run _threaded_work in a forked child that saves its results to `path`; exit code."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork of a threaded process
        pid = os.fork()
    if pid == 0:  # child: never returns into pytest
        code = 1
        try:
            np.savez(path, **_threaded_work())
            code = 0
        finally:
            os._exit(code)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail(f"the forked child did not finish within {timeout} s (OpenMP hang after fork)")


def test_forked_child_runs_serially_with_the_same_results(tmp_path):
    parent = _threaded_work()  # starts OpenMP teams in this process
    assert parent["threads"]
    path = tmp_path / "child.npz"
    assert _run_in_forked_child(str(path)) == 0
    child = np.load(path)
    assert not child["threads"]  # the child knew not to start a team
    for key in ("R", "T", "kin", "dyn", "imp"):
        np.testing.assert_array_equal(child[key], parent[key], err_msg=key)
    assert _loops.threads_available()  # the parent itself is unaffected
