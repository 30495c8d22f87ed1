"""The one-pass y0 sensitivity of the specialised engine (rotode/_tangent.hpp: the pairs on
the state and Runge-Kutta-Munthe-Kaas on the group) on every instruction set the CPU runs, and
through `integrate`'s thin call path.

The dual numbers' arithmetic is vector code (rotode/_dual.hpp) compiled for the baseline and
AVX2 (`dual2`: two 4-vectors per number) and for AVX-512 (`dual`: one 8-vector; also with the
torque kind inlined); rotode promises that results do not depend on the vector width: every
set must give the same bits, for the rows (the plain run's) and for the tangents.
"""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from test_sensitivity import _perturbed, _tangent

import rotode
from rotode import _lanes

Q0 = Rotation.from_rotvec([0.3, -0.5, 0.8]).as_quat(scalar_first=True)
W0 = np.array([0.4, 1.1, -0.3])
FULL = np.array([[1.2, 0.1, -0.05], [0.1, 1.7, 0.02], [-0.05, 0.02, 2.3]])
BODIES = {
    "top, gravity on the axis": rotode.RigidBody([1.0, 1.0, 0.5], torque=rotode.torque.Gravity(
        1.0, 1.0, [0.0, 0.0, 1.0])),
    "gravity": rotode.RigidBody([1.2, 1.7, 2.3], torque=rotode.torque.Gravity(
        1.0, 9.81, [0.02, -0.01, 0.3])),
    "full inertia, world torque": rotode.RigidBody(FULL, torque=rotode.torque.Constant(
        [0.1, -0.2, 0.3], frame="world")),
    "body torque": rotode.RigidBody([1.2, 1.7, 2.3], torque=rotode.torque.Constant(
        [0.1, -0.2, 0.3])),
    "torque-free, norm gain": rotode.RigidBody([1.2, 1.7, 2.3], norm_gain=2.0),
}
SETS = _lanes.available()


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint64)


def _run(body, method, isa, **kw):
    before = _lanes.use(isa)
    try:
        return rotode.integrate(body, (0, 3.0), np.r_[0.9 * Q0, W0], method=method,
                                rtol=1e-9, atol=1e-11, sensitivity=["y0"], **kw)
    finally:
        _lanes.use(before)


@pytest.mark.parametrize("method", ["bs3", "dopri5", "dop853", "rkmk3", "rkmk5", "rkmk8"])
@pytest.mark.parametrize("case", sorted(BODIES))
def test_every_instruction_set_gives_the_same_bits(method, case):
    body = BODIES[case]
    ref = _run(body, method, SETS[0], t_eval=[0.0, 0.7, 3.0])
    assert ref.success and np.isfinite(ref.sensitivity["y0"]).all()
    plain = rotode.integrate(body, (0, 3.0), np.r_[0.9 * Q0, W0], method=method, rtol=1e-9,
                             atol=1e-11, t_eval=[0.0, 0.7, 3.0])
    assert np.array_equal(_bits(ref.y), _bits(plain.y))      # the value lanes: the plain run
    for isa in SETS[1:]:
        got = _run(body, method, isa, t_eval=[0.0, 0.7, 3.0])
        assert np.array_equal(_bits(got.y), _bits(ref.y)), isa
        assert np.array_equal(_bits(got.sensitivity["y0"]), _bits(ref.sensitivity["y0"])), isa
        assert got.stats == ref.stats, isa


@pytest.mark.parametrize("isa", SETS)
@pytest.mark.parametrize("method", ["dopri5", "dop853", "rkmk8"])
def test_thin_path_equals_the_general_path(method, isa):
    # `integrate(body, span, y0, method=, rtol=, atol=, sensitivity=["y0"])` of one body enters
    # the engine directly; max_steps (which does not bind here) sends it the general way
    body = BODIES["top, gravity on the axis"]
    thin = _run(body, method, isa)
    general = _run(body, method, isa, max_steps=10**8)
    assert np.array_equal(_bits(thin.t), _bits(general.t))
    assert np.array_equal(_bits(thin.y), _bits(general.y))
    assert np.array_equal(_bits(thin.w), _bits(general.w))
    assert np.array_equal(_bits(thin.sensitivity["y0"]), _bits(general.sensitivity["y0"]))
    assert thin.stats == general.stats
    assert thin.sensitivity["y0"].shape == (2, 6, 6)


@pytest.mark.parametrize("method", ["dop853", "rkmk8"])
def test_thin_path_sensitivity_against_central_differences(method):
    body = BODIES["gravity"]
    y0 = np.r_[Q0, W0]
    kw = dict(method=method, rtol=1e-12, atol=1e-14)
    S = rotode.integrate(body, (0, 2.0), y0, sensitivity=("y0",), **kw).sensitivity["y0"][-1]
    ref = rotode.integrate(body, (0, 2.0), y0, **kw).y[-1]
    eps = 1e-6
    for j in range(6):
        d = [_tangent(rotode.integrate(body, (0, 2.0), _perturbed(y0, j, s), **kw).y[-1], ref)
             for s in (eps, -eps)]
        np.testing.assert_allclose((d[0] - d[1]) / (2 * eps), S[:, j], rtol=0, atol=2e-7)


def test_thin_path_leaves_other_requests_to_the_general_path():
    body = BODIES["gravity"]
    y0 = np.r_[Q0, W0]
    both = rotode.integrate(body, (0, 1.0), y0, method="dop853", rtol=1e-9, atol=1e-11,
                            sensitivity=["y0", "inertia"])
    assert set(both.sensitivity) == {"y0", "inertia"}
    one = rotode.integrate(body, (0, 1.0), y0, method="dop853", rtol=1e-9, atol=1e-11,
                           sensitivity=["y0"])
    assert np.array_equal(both.sensitivity["y0"], one.sensitivity["y0"])
    with pytest.raises(ValueError, match="parameter"):
        rotode.integrate(body, (0, 1.0), y0, method="dop853", rtol=1e-9, atol=1e-11,
                         sensitivity=["y1"])
