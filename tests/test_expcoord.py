"""solve_expcoord (chart re-anchoring), sampled gyroscope data, as_rotation."""
import numpy as np
import pytest
import reference as ref
from numpy.testing import assert_allclose
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

from rotode import omega, torque
from rotode.rhs import (
    EulerAnglesXYZ,
    ExpCoordKinematics,
    ExpCoordRigidBody,
    QuaternionKinematics,
    RigidBody,
    RotationMatrix,
)
from rotode.solve import as_rotation, solve_expcoord

BENCH = omega.Sinusoid(amplitude=np.pi / 2, rate=2 * np.pi / 10,
                       phase=[0, 2 * np.pi / 3, 4 * np.pi / 3])


@pytest.mark.parametrize("frame", ["body", "world"])
def test_fifty_revolutions_closed_form(frame):
    axis = np.array([0.3, -0.5, 1.1]) / np.linalg.norm([0.3, -0.5, 1.1])
    w = 2 * np.pi * axis                                      # one revolution per second
    base = Rotation.from_rotvec([0.2, 0.4, -0.1])
    rhs = ExpCoordKinematics(w, frame)
    rhs.base = base.as_quat(scalar_first=True)
    sol = solve_expcoord(rhs, (0, 50), [0, 0, 0], method="DOP853", rtol=1e-12, atol=1e-12)
    assert sol.success and sol.n_reanchor >= 99
    turn = Rotation.from_rotvec(np.outer(sol.t, w))
    exact = base * turn if frame == "body" else turn * base
    assert (exact.inv() * sol.rotation).magnitude().max() <= 1e-8
    assert np.all(np.linalg.norm(sol.y, axis=0) <= np.pi + 1e-9)
    assert_allclose(rhs.base, base.as_quat(scalar_first=True))   # restored


def test_t_eval_and_rigid_body_against_quaternion_form():
    Im = np.array([2.5, 1.4, 1.3])
    grav = torque.Gravity(1.0, 9.81, [0.1, 0.0, 0.3])
    w0 = np.array([0.3, 4.0, 0.2])
    t_eval = np.linspace(0, 20, 41)
    ec = solve_expcoord(ExpCoordRigidBody(Im, grav), (0, 20), np.concatenate([[0, 0, 0], w0]),
                        method="DOP853", rtol=1e-11, atol=1e-11, t_eval=t_eval)
    qs = solve_ivp(RigidBody(Im, grav), (0, 20), np.concatenate([[1, 0, 0, 0], w0]),
                   method="DOP853", rtol=1e-11, atol=1e-11, t_eval=t_eval)
    assert_allclose(ec.t, t_eval)
    assert ec.n_reanchor > 3
    err = (as_rotation(ec).inv() * as_rotation(qs)).magnitude()
    assert err.max() < 1e-7
    assert_allclose(ec.y[3:], qs.y[4:], atol=1e-7)


def test_cubic_samples_at_100hz_match_exact_w():
    t = np.arange(0, 100.0 + 1e-9, 0.01)
    w = np.array([ref.benchmark_w(x) for x in t])
    opts = dict(method="DOP853", rtol=1e-12, atol=1e-12)
    exact = solve_expcoord(ExpCoordKinematics(BENCH, "body"), (0, 100), [0, 0, 0], **opts)
    sampled = solve_expcoord(ExpCoordKinematics(omega.Samples(t, w, kind="cubic"), "body"),
                             (0, 100), [0, 0, 0], **opts)
    err = (exact.rotation[-1].inv() * sampled.rotation[-1]).magnitude()
    assert np.degrees(err) <= 1e-6
    # the quaternion form agrees with the re-anchored exponential coordinates
    qs = solve_ivp(QuaternionKinematics(BENCH), (0, 100), [1, 0, 0, 0], **opts)
    assert (as_rotation(qs)[-1].inv() * exact.rotation[-1]).magnitude() < 1e-9


def test_as_rotation_kinds():
    rot = Rotation.from_rotvec([[0.1, 0.2, 0.3], [1.0, -0.5, 2.0]])
    q = rot.as_quat(scalar_first=True).T * 2.5          # non-unit
    assert (as_rotation(q).inv() * rot).magnitude().max() < 1e-14
    assert (as_rotation(rot.as_rotvec().T).inv() * rot).magnitude().max() < 1e-14
    Y = np.vstack([rot.as_matrix().reshape(2, 9).T, np.zeros((3, 2))])
    assert (as_rotation(Y).inv() * rot).magnitude().max() < 1e-14
    E = rot.as_euler("XYZ").T
    assert (as_rotation(E, kind="euler_xyz").inv() * rot).magnitude().max() < 1e-14
    single = as_rotation(q[:, 0])
    assert single.single
    with pytest.raises(ValueError, match="cannot infer `kind`"):
        as_rotation(np.zeros((5, 2)))
    with pytest.raises(ValueError, match="`kind` must be one of"):
        as_rotation(q, kind="rodrigues")
    with pytest.raises(ValueError, match="nonzero"):
        as_rotation(np.zeros(4))


def test_euler_and_matrix_forms_follow_the_top():
    Im = [1.0, 1.0, 0.5]
    grav = torque.Gravity(1, 1, [0, 0, 1])
    opts = dict(method="DOP853", rtol=1e-11, atol=1e-12, t_eval=[0, 2, 4])
    w0 = [1.5, 0, 1]
    q = solve_ivp(RigidBody(Im, grav), (0, 4), [1, 0, 0, 0, *w0], **opts)
    e = solve_ivp(EulerAnglesXYZ(Im, grav), (0, 4), [0.1, 0.2, 0.0, *w0], **opts)
    m = solve_ivp(RotationMatrix(Im, grav), (0, 4), [*np.eye(3).ravel(), *w0], **opts)
    # matrix form from the identity equals the quaternion form
    assert (as_rotation(q).inv() * as_rotation(m)).magnitude().max() < 1e-8
    assert e.success


def test_solve_expcoord_bad_input():
    with pytest.raises(TypeError, match="ExpCoordKinematics or ExpCoordRigidBody"):
        solve_expcoord(QuaternionKinematics([0, 0, 1]), (0, 1), [1, 0, 0, 0])
    with pytest.raises(ValueError, match="does not support `events`"):
        solve_expcoord(ExpCoordKinematics([0, 0, 1]), (0, 1), [0, 0, 0], events=[lambda t, y: 1])
    with pytest.raises(ValueError, match=r"`y0` must have shape \(3,\)"):
        solve_expcoord(ExpCoordKinematics([0, 0, 1]), (0, 1), [0, 0, 0, 0])
