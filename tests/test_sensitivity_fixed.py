"""The compiled sensitivity passes of fixed-grid runs (rotode/_tangent_fixed.hpp: rk3, rk4 and
ab3 of a rigid body whose torque the specialised engine compiles).

They replace the dual-number replay (rotode/_tangent.pyx `rigid_body`) for those runs: the same
directions, passes and tangent coordinates, so the two must agree to round-off for every
parameter kind, torque kind, inertia shape and option; every instruction set must give the same
bits; and a body the passes do not cover (a Python torque) still gets the replay.
"""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import rotode
from rotode import _lanes, _tangent, dynamic, methods

Q0 = Rotation.from_rotvec([0.3, -0.5, 0.8]).as_quat(scalar_first=True)
W0 = np.array([0.4, 1.1, -0.3])
FULL = np.array([[1.2, 0.1, -0.05], [0.1, 1.7, 0.02], [-0.05, 0.02, 2.3]])
GRAVITY = rotode.torque.Gravity(1.3, 9.81, [0.02, -0.01, 0.3])
BODIES = {
    "torque-free": (rotode.RigidBody([1.2, 1.7, 2.3]), ["y0", "inertia"]),
    "top, gravity on the axis": (rotode.RigidBody([1.0, 1.0, 0.5], torque=rotode.torque.Gravity(
        1.0, 1.0, [0.0, 0.0, 1.0])), ["y0", "inertia", "mass", "g", "com"]),
    "gravity": (rotode.RigidBody([1.2, 1.7, 2.3], torque=GRAVITY),
                ["y0", "inertia", "mass", "g", "com"]),
    "full inertia, world torque": (rotode.RigidBody(FULL, torque=rotode.torque.Constant(
        [0.1, -0.2, 0.3], frame="world")), ["y0", "inertia", "torque"]),
    "body torque": (rotode.RigidBody([1.2, 1.7, 2.3], torque=rotode.torque.Constant(
        [0.1, -0.2, 0.3])), ["y0", "inertia", "torque"]),
    "norm gain": (rotode.RigidBody([1.2, 1.7, 2.3], norm_gain=2.0), ["y0", "inertia"]),
}
FIXED = [m for m in ("rk3", "rk4", "ab3") if methods.get(m).sensitivity("rigid body")]
T_EVAL = [0.0, 0.25, 1.0, 2.0]


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint64)


def _run(body, method, names, isa=None, **kw):
    before = _lanes.use(isa) if isa else None
    try:
        return rotode.integrate(body, (0, 2.0), np.r_[0.9 * Q0, W0], method=method, dt=0.05,
                                t_eval=T_EVAL, sensitivity=names, **kw)
    finally:
        if before:
            _lanes.use(before)


def _replayed(body, method, names, normalize=False):
    """The replay's result for the same run, column blocks in the order of `names`."""
    full = bool(np.count_nonzero(body.inertia - np.diag(np.diagonal(body.inertia))))
    counts = {"y0": 6, "inertia": 6 if full else 3, "torque": 3, "mass": 1, "g": 1, "com": 3}
    cols = [(p, j) for p in names for j in range(counts[p])]
    grid = np.linspace(0.0, 2.0, 41)
    out = _tangent.rigid_body(method, body, np.r_[0.9 * Q0, W0], grid, T_EVAL, cols,
                              normalize=normalize, full=full)
    return dict(zip(names, np.split(out, np.cumsum([counts[p] for p in names])[:-1], axis=2),
                    strict=True))


@pytest.mark.parametrize("method", FIXED)
@pytest.mark.parametrize("case", sorted(BODIES))
def test_the_compiled_passes_equal_the_replay(method, case):
    body, names = BODIES[case]
    res = _run(body, method, names)
    assert res.success
    ref = _replayed(body, method, names)
    for p in names:
        scale = max(1.0, np.abs(ref[p]).max())
        np.testing.assert_allclose(res.sensitivity[p], ref[p], rtol=0, atol=1e-12 * scale,
                                   err_msg=p)


@pytest.mark.parametrize("method", FIXED)
def test_normalize_is_differentiated(method):
    body, names = BODIES["gravity"]
    res = _run(body, method, names, normalize=True)
    ref = _replayed(body, method, names, normalize=True)
    for p in names:
        np.testing.assert_allclose(res.sensitivity[p], ref[p], rtol=0, atol=1e-12, err_msg=p)


def test_the_passes_run_and_the_replay_does_not():
    # the compiled passes are what `integrate` takes for these runs (not the replay again)
    body, names = BODIES["gravity"]
    cols = [("y0", j) for j in range(6)]
    got = dynamic.fixed_tangent("rk4", body, np.r_[Q0, W0], np.linspace(0, 1, 11),
                                np.array([0, 5, 10]), cols)
    assert got.shape == (3, 6, 6)
    np.testing.assert_array_equal(got[0], np.eye(6))
    python_torque = rotode.RigidBody([1.2, 1.7, 2.3], torque=lambda t, q, w: -0.1 * w)
    assert dynamic.fixed_tangent("rk4", python_torque, np.r_[Q0, W0], np.linspace(0, 1, 11),
                                 np.array([0, 10]), cols) is None
    assert dynamic.fixed_tangent("dop853", body, np.r_[Q0, W0], np.linspace(0, 1, 11),
                                 np.array([0, 10]), cols) is None
    res = rotode.integrate(python_torque, (0, 1), np.r_[Q0, W0], method="rk4", dt=0.1,
                           sensitivity=["y0"])
    assert res.success and np.isfinite(res.sensitivity["y0"]).all()


@pytest.mark.parametrize("case", ["gravity", "full inertia, world torque", "norm gain"])
def test_every_instruction_set_gives_the_same_bits(case):
    body, names = BODIES[case]
    sets = _lanes.available()
    ref = _run(body, "rk4", names, sets[0])
    for isa in sets[1:]:
        got = _run(body, "rk4", names, isa)
        for p in names:
            assert np.array_equal(_bits(got.sensitivity[p]), _bits(ref.sensitivity[p])), (isa, p)


def test_central_differences_of_the_inertia():
    # an independent check of the inertia columns: central differences of fixed-step runs
    body, _ = BODIES["gravity"]
    res = _run(body, "rk4", ["inertia"])
    eps = 1e-6
    for k in range(3):
        runs = []
        for sign in (1, -1):
            moments = np.diagonal(body.inertia).copy()
            moments[k] += sign * eps
            runs.append(rotode.integrate(rotode.RigidBody(moments, torque=GRAVITY), (0, 2.0),
                                         np.r_[0.9 * Q0, W0], method="rk4", dt=0.05,
                                         t_eval=T_EVAL))
        dw = (runs[0].w - runs[1].w) / (2 * eps)
        np.testing.assert_allclose(res.sensitivity["inertia"][:, 3:, k], dw, rtol=1e-7,
                                   atol=1e-8)
