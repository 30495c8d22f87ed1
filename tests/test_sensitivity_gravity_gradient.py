"""Sensitivities of a rigid body under the gravity-gradient torque (issue 30): its orbit's
parameters and the body's inertia, which moves the torque too.

References independent of the derivative's code (rotode/torque.pyx
`gravity_gradient_tangent`): central differences of fixed-step runs (no step control to
perturb) of bodies built with the perturbed parameter, and single runs for a batch.
"""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import rotode
from rotode import methods

Q0 = Rotation.from_rotvec([0.3, -0.5, 0.8]).as_quat(scalar_first=True)
W0 = np.array([0.4, 1.1, -0.3])
Y0 = np.r_[Q0, W0]
INERTIA = np.array([1.2, 1.7, 2.3])
# a fast orbit (n = 1.1 rad/s), so that the torque moves the body within the run
ORBIT = {"mean_motion": 1.1, "argument_of_latitude": 0.3, "inclination": 0.7, "raan": 0.4}
NAMES = ("inertia",) + tuple(ORBIT)


def _tangent(y, ref):
    """[dtheta, y[4:] - ref[4:]] of a row near ref (dtheta: q = q_ref exp(dtheta/2))."""
    rel = (Rotation.from_quat(ref[:4], scalar_first=True).inv()
           * Rotation.from_quat(y[:4], scalar_first=True))
    return np.r_[rel.as_rotvec(), y[4:] - ref[4:]]


def _body(inertia=INERTIA, **orbit):
    return rotode.RigidBody(inertia, torque=rotode.torque.GravityGradient(
        inertia, **{**ORBIT, **orbit}))


def _options(method):
    return {"normalize": True} if method in ("rk3", "rk4") else {}


def _run(method, body, **kw):
    return rotode.integrate(body, (0, 1.5), Y0, method=method, dt=0.05, **_options(method),
                            **kw)


def _central(method, make, value, eps):
    """Central differences of the final row of fixed-step runs of make(v), v around `value`."""
    ref = _run(method, make(value)).y[-1]
    cols = []
    for j in range(np.size(value)):
        v = np.atleast_1d(np.asarray(value, dtype=float))
        d = []
        for s in (eps, -eps):
            w = v.copy()
            w[j] += s
            d.append(_tangent(_run(method, make(w if np.ndim(value) else float(w[0]))).y[-1],
                              ref))
        cols.append((d[0] - d[1]) / (2 * eps))
    return np.array(cols).T


@pytest.mark.parametrize("method", [m for m in methods.names("rigid body")
                                    if methods.get(m).sensitivity("rigid body", "raan")])
def test_every_parameter_against_finite_differences(method):
    """Every method that differentiates the torque x every GravityGradient parameter and the
    inertia (body and torque moved together): central differences of fixed-step runs to
    1e-7."""
    res = _run(method, _body(), sensitivity=list(NAMES))
    for name in NAMES:
        if name == "inertia":
            want = _central(method, lambda v: _body(inertia=v), INERTIA, 1e-6)
        else:
            want = _central(method, lambda v, name=name: _body(**{name: v}), ORBIT[name], 1e-6)
        got = res.sensitivity[name][-1]
        assert got.shape == want.shape == (6, 3 if name == "inertia" else 1)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-7 * np.abs(want).max(),
                                   err_msg=name)


def test_inertia_moves_the_torque():
    """The body's inertia alone (the torque's held) is a different derivative: the gravity
    gradient's part of it is not negligible in this run, so the test above can fail."""
    res = _run("rk4", _body(), sensitivity=["inertia"])

    def body_only(v):
        return rotode.RigidBody(v, torque=rotode.torque.GravityGradient(INERTIA, **ORBIT))

    held = _central("rk4", body_only, INERTIA, 1e-6)
    got = res.sensitivity["inertia"][-1]
    assert np.abs(got - held).max() > 1e-2 * np.abs(got).max()


def test_full_tensor_against_finite_differences():
    """A non-diagonal inertia: its six components, body and torque together."""
    R = Rotation.from_rotvec([0.2, -0.1, 0.3]).as_matrix()
    J = R @ np.diag(INERTIA) @ R.T
    res = _run("rk4", _body(inertia=J), sensitivity=["inertia"])
    got = res.sensitivity["inertia"][-1]
    comps = [(0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)]

    def make(v):
        M = np.zeros((3, 3))
        for (a, b), x in zip(comps, v, strict=True):
            M[a, b] = M[b, a] = x
        return _body(inertia=M)

    want = _central("rk4", make, np.array([J[a, b] for a, b in comps]), 1e-6)
    assert got.shape == want.shape == (6, 6)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-7 * np.abs(want).max())


def test_sum_with_gravity_gradient():
    """A Sum holding the gravity gradient: its inertia dependence is the part's."""
    other = rotode.torque.Constant([0.1, -0.2, 0.05])

    def make(v):
        return rotode.RigidBody(v, torque=rotode.torque.GravityGradient(v, **ORBIT) + other)

    res = _run("dop853", make(INERTIA), sensitivity=["y0", "inertia"])
    want = _central("dop853", make, INERTIA, 1e-6)
    got = res.sensitivity["inertia"][-1]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-7 * np.abs(want).max())


def test_batch_equals_single_runs():
    """Per-body orbits: each body's derivative is its single run's, bit for bit."""
    n = np.array([0.9, 1.1, 1.3])
    batch = rotode.RigidBody(INERTIA, torque=rotode.torque.GravityGradient(
        INERTIA, n, ORBIT["argument_of_latitude"], ORBIT["inclination"], ORBIT["raan"]))
    y0 = np.tile(Y0, (3, 1))
    for workers in (1, 2):
        res = rotode.integrate(batch, (0, 1.5), y0, method="rkmk5", dt=0.05, workers=workers,
                               sensitivity=list(NAMES))
        for i in range(3):
            one = _run("rkmk5", _body(mean_motion=n[i]), sensitivity=list(NAMES))
            for name in NAMES:
                np.testing.assert_array_equal(res.sensitivity[name][i], one.sensitivity[name])


def test_error_controlled_y0_and_orbit():
    """An error-controlled run: the orbit's derivative against central differences of runs
    at rtol 1e-11 (whose steps move under the perturbation: to 1e-5), y0's beside it."""
    kw = {"rtol": 1e-11, "atol": 1e-13}
    res = rotode.integrate(_body(), (0, 1.5), Y0, method="dop853", sensitivity=["y0", "raan"],
                           **kw)

    def run(v):
        return rotode.integrate(_body(raan=v), (0, 1.5), Y0, method="dop853", **kw).y[-1]

    ref = run(ORBIT["raan"])
    want = (_tangent(run(ORBIT["raan"] + 1e-4), ref)
            - _tangent(run(ORBIT["raan"] - 1e-4), ref)) / 2e-4
    np.testing.assert_allclose(res.sensitivity["raan"][-1, :, 0], want, rtol=0,
                               atol=1e-5 * np.abs(want).max())
    assert np.isfinite(res.sensitivity["y0"]).all()


def test_bad_input():
    with pytest.raises(ValueError, match=r"GravityGradient torque's `inertia` to be the body's"):
        rotode.integrate(rotode.RigidBody(INERTIA, torque=rotode.torque.GravityGradient(
            1.1 * INERTIA, **ORBIT)), (0, 1), Y0, method="rk4", dt=0.1,
            sensitivity=["inertia"])
    with pytest.raises(ValueError, match=r"'mass'.*\('y0', 'q0', 'w0', 'inertia', 'mean_motion', "
                                         r"'argument_of_latitude', 'inclination', 'raan'\)"):
        rotode.integrate(_body(), (0, 1), Y0, method="rk4", dt=0.1, sensitivity=["mass"])
    # the torque's own inertia is not a separate parameter, so a mismatch only matters for
    # the inertia: the orbit's derivatives are defined
    res = rotode.integrate(rotode.RigidBody(INERTIA, torque=rotode.torque.GravityGradient(
        1.1 * INERTIA, **ORBIT)), (0, 1), Y0, method="rk4", dt=0.1, sensitivity=["raan"])
    assert res.sensitivity["raan"].shape == (11, 6, 1)


@pytest.mark.parametrize("method", ["bs3", "dopri5", "dop853", "rkmk3", "rkmk5", "rkmk8"])
def test_one_pass_carries_the_gravity_gradient(method):
    """An error-controlled pair carries the y0 sensitivity in the run's own pass (the
    specialised engine's time-dependent torque on duals, rotode/_tangent.hpp): the plain
    run's steps and rows bit for bit, the tangent of the dual-number replay of those steps
    (rotode/_tangent.pyx, an independent implementation), the same bits on every
    instruction set the machine runs and on the one-body call's thin path."""
    from rotode import _lanes, _plan, _runplan, _sensitivity, _validation
    body, tout = _body(), [0.0, 0.37, 1.1, 2.0]
    kw = dict(method=method, rtol=1e-9, atol=1e-11)
    plan = _runplan.Plan(method, body, Y0[None], *_plan.output_grid((0, 2.0), tout, None), {},
                         1, control=_validation.as_control(1e-9, 1e-11, None, None, None, 7,
                                                           2.0, t_eval=True))
    assert rotode.dynamic.tangent_ready(plan)
    one = rotode.integrate(body, (0, 2.0), Y0, t_eval=tout, sensitivity=["y0"], **kw)
    plain = rotode.integrate(body, (0, 2.0), Y0, t_eval=tout, **kw)
    assert np.array_equal(one.y, plain.y) and one.stats["nfev"] == plain.stats["nfev"]
    replay = _sensitivity._rigid(_sensitivity.SensitivityRun(plan, rotode.dynamic,
                                                             "rigid body"), ("y0",), one.y[None])
    np.testing.assert_allclose(one.sensitivity["y0"], replay["y0"][0], rtol=0, atol=1e-12)
    before = _lanes.get()
    try:
        for name in _lanes.available():
            _lanes.use(name)
            again = rotode.integrate(body, (0, 2.0), Y0, t_eval=tout, sensitivity=["y0"], **kw)
            assert np.array_equal(again.sensitivity["y0"], one.sensitivity["y0"]), name
    finally:
        _lanes.use(before)
    thin = rotode.integrate(body, (0, 2.0), Y0, sensitivity=["y0"], **kw)
    assert np.array_equal(thin.sensitivity["y0"][-1], one.sensitivity["y0"][-1])
