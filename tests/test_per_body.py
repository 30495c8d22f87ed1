"""Per-body model parameters: an ensemble of dispersed rigid bodies in one batched call.

Reference: each body run alone with its own one-body model (the batched driver does the same
arithmetic per body), bit for bit.
"""
import pickle

import numpy as np
import pytest

import rotode

N = 7


def _ensemble(seed=0):
    rng = np.random.default_rng(seed)
    inertia = np.array([1.0, 1.0, 0.5]) * (1.0 + 0.05 * rng.random((N, 3)))
    com = np.c_[np.zeros((N, 2)), 0.8 + 0.4 * rng.random(N)]
    mass = 1.0 + rng.random(N)
    y0 = np.tile([1.0, 0, 0, 0, 1.5, 0, 1.0], (N, 1))
    y0[:, 4:] += 0.2 * rng.normal(size=(N, 3))
    return inertia, com, mass, y0


@pytest.mark.parametrize("method, step", [("rk4", {"dt": 0.01}), ("rkmk8", {"rtol": 1e-9}),
                                          ("implicit_midpoint", {"dt": 0.05}),
                                          ("dop853", {"rtol": 1e-8})])
def test_per_body_inertia_and_gravity_equal_single_runs(method, step):
    inertia, com, mass, y0 = _ensemble()
    model = rotode.RigidBody(inertia, torque=rotode.torque.Gravity(mass, 9.81, com))
    assert model.n_bodies == N
    res = rotode.integrate(model, (0, 5), y0, method=method, t_eval=[0, 2.5, 5], **step)
    for i in range(N):
        one = rotode.RigidBody(inertia[i], torque=rotode.torque.Gravity(mass[i], 9.81, com[i]))
        single = rotode.integrate(one, (0, 5), y0[i], method=method, t_eval=[0, 2.5, 5], **step)
        np.testing.assert_array_equal(res.y[i], single.y)
        np.testing.assert_array_equal(model[i](0.3, y0[i]), one(0.3, y0[i]))


def test_per_body_full_tensors_and_constant_torques():
    inertia, _, _, y0 = _ensemble(1)
    rng = np.random.default_rng(2)
    rot = rotode.quaternion.to_matrix(rng.normal(size=(N, 4)))
    tensors = rot @ (inertia[:, :, None] * np.eye(3)) @ np.swapaxes(rot, 1, 2)
    tau = 0.01 * rng.normal(size=(N, 3))
    model = rotode.RigidBody(tensors, torque=tau)
    res = rotode.integrate(model, (0, 3), y0, method="rk4", dt=0.01)
    for i in range(N):
        single = rotode.integrate(rotode.RigidBody(tensors[i], torque=tau[i]), (0, 3), y0[i],
                                  method="rk4", dt=0.01)
        np.testing.assert_array_equal(res.y[i], single.y)
    np.testing.assert_array_equal(model[2].torque.tau, tau[2])
    np.testing.assert_allclose(model[-1].inertia, tensors[-1], rtol=0, atol=1e-15)


def test_shared_inertia_per_body_torque_and_pickle():
    _, com, _, y0 = _ensemble(3)
    model = rotode.RigidBody([1.0, 1.0, 0.5], torque=rotode.torque.Gravity(1.0, 1.0, com))
    assert model.n_bodies == N
    back = pickle.loads(pickle.dumps(model))
    a = rotode.integrate(model, (0, 2), y0, method="rk4", dt=0.01)
    b = rotode.integrate(back, (0, 2), y0, method="rk4", dt=0.01)
    np.testing.assert_array_equal(a.y, b.y)
    assert "per-body" in repr(model)


def test_per_body_errors():
    inertia, com, _, y0 = _ensemble()
    model = rotode.RigidBody(inertia)
    with pytest.raises(ValueError, match="per-body parameters for 7 bodies but `y0` holds 3"):
        rotode.integrate(model, (0, 1), y0[:3], method="rk4", dt=0.1)
    with pytest.raises(ValueError, match=r"model\[i\]"):
        model(0.0, y0[0])
    with pytest.raises(ValueError, match="same number of bodies"):
        rotode.RigidBody(inertia, torque=np.zeros((N + 1, 3)))
    with pytest.raises(ValueError, match="positive"):
        rotode.RigidBody(-inertia)
    with pytest.raises(ValueError, match="`inertia` must have shape"):
        rotode.RigidBody(np.ones((N, 4)))
    with pytest.raises(ValueError, match="one body's right-hand side"):
        rotode.ExpCoordRigidBody([1.0, 2.0, 2.5], torque=np.zeros((N, 3)))
    with pytest.raises(ValueError, match="per-body parameters"):
        rotode.torque.Gravity(1.0, 1.0, com)(0.0, [1, 0, 0, 0], [0, 0, 0])
    with pytest.raises(ValueError, match="`mass` must be > 0"):
        rotode.torque.Gravity(-np.ones(N), 1.0, [0, 0, 1])
    with pytest.raises(IndexError):
        model[N]
    with pytest.raises(TypeError, match="only a per-body one"):
        rotode.RigidBody([1.0, 2.0, 2.5])[0]
    with pytest.raises(TypeError, match="integer"):
        model[1.5]


def test_per_body_force_and_mass_rkn4():
    rng = np.random.default_rng(9)
    y0 = np.zeros((N, 13))
    y0[:, 0] = 1.0
    y0[:, 4:7] = rng.normal(size=(N, 3))
    y0[:, 10:13] = rng.normal(size=(N, 3))
    force, mass = rng.normal(size=(N, 3)), 1.0 + rng.random(N)
    body = rotode.RigidBody([1.0, 2.0, 2.5])
    res = rotode.integrate(body, (0, 1), y0, method="rkn4", dt=0.01, force=force, mass=mass)
    for i in range(N):
        single = rotode.integrate(body, (0, 1), y0[i], method="rkn4", dt=0.01, force=force[i],
                                  mass=mass[i])
        np.testing.assert_array_equal(res.y[i], single.y)
    # x'' = F/m exactly (a constant force moves the centre of mass on a parabola)
    expected = y0[:, 7:10] + y0[:, 10:13] + 0.5 * force / mass[:, None]
    np.testing.assert_allclose(res.p[:, -1], expected, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="option `force` holds 3 per-body rows but `y0` 7"):
        rotode.integrate(body, (0, 1), y0, method="rkn4", dt=0.1, force=force[:3], mass=1.0)
    with pytest.raises(ValueError, match="option `mass` must be > 0"):
        rotode.integrate(body, (0, 1), y0, method="rkn4", dt=0.1, force=force, mass=-mass)


def test_per_body_diagonal_tensors_match_one_body_models():
    """Each row's inverse is taken as a one-body model takes it (diagonal: 1/I exactly), so
    (N, 3, 3) diagonal tensors give a one-body model's bits."""
    inertia, _, _, y0 = _ensemble(4)
    tensors = inertia[:, :, None] * np.eye(3)
    res = rotode.integrate(rotode.RigidBody(tensors), (0, 2), y0, method="rkmk8", rtol=1e-10)
    for i in range(N):
        single = rotode.integrate(rotode.RigidBody(tensors[i]), (0, 2), y0[i], method="rkmk8",
                                  rtol=1e-10)
        np.testing.assert_array_equal(res.y[i], single.y)
