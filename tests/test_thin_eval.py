"""The thin call path of an error-controlled run with ``t_eval`` (`rotode._plan.thin_run` and
`thin_sensitivity` with `output_grid`'s grid -> `dynamic.run_single` / `kinematic.run_single`
-> the engine's rows at the requested times, as the general path runs them).

Each call is compared with the same call on the general path (``workers=None`` takes it): the
same times, rows, angular velocities, stats and y0 sensitivity, to the bit, for every pair
and RKMK method on a rigid body and on kinematics (and the adaptive Magnus methods), with
requested times inside the span, at its ends, a single one, backwards.  What the thin path
declines (a user's `ODE` with ``t_eval``, a ``t_eval`` the general path refuses) still runs
or raises there.
"""
import numpy as np
import pytest
from test_thin_fixed import _same

import rotode
from rotode import _plan, dynamic, kinematic

TOP = rotode.RigidBody([1.0, 1.0, 0.5], torque=rotode.torque.Gravity(1.0, 9.81, [0, 0, 0.1]))
Y0 = np.array([1.0, 0.0, 0.0, 0.0, 0.3, -0.2, 5.0])
RATE = rotode.omega.Sinusoid(amplitude=[0.5, 1.0, 0.3], rate=2.0, phase=[0.0, 1.0, 2.0])
Q0 = np.array([0.9, 0.1, -0.2, 0.3])
# (t_span, t_eval): inside, with both ends, one time, one at the start, backwards
CALLS = [((0.0, 2.0), [0.25, 0.5, 1.0, 1.75]), ((0.0, 2.0), np.linspace(0.0, 2.0, 41)),
         ((0.0, 2.0), [1.3]), ((0.0, 2.0), [0.0]), ((2.0, 0.5), [1.9, 1.0, 0.5])]
RIGID = sorted(set(dynamic.ENGINE_PAIRS) | set(dynamic.ENGINE_GROUP_PAIRS))
KINEMATIC = sorted(set(kinematic.ENGINE_PAIRS) | set(kinematic.ENGINE_GROUP_PAIRS)
                   | set(kinematic.ENGINE_MAGNUS))


@pytest.mark.parametrize("method", RIGID)
def test_rigid_body_with_t_eval_on_the_thin_path(method):
    for t_span, t_eval in CALLS:
        assert _plan.thin_run(TOP, t_span, Y0, method, 1e-9, 1e-11, None, {},
                              t_eval) is not None
        thin = rotode.integrate(TOP, t_span, Y0, method=method, rtol=1e-9, atol=1e-11,
                                t_eval=t_eval)
        general = rotode.integrate(TOP, t_span, Y0, method=method, rtol=1e-9, atol=1e-11,
                                   t_eval=t_eval, workers=None)
        _same(thin, general)
        np.testing.assert_array_equal(thin.t, np.asarray(t_eval, dtype=float))


@pytest.mark.parametrize("method", KINEMATIC)
@pytest.mark.parametrize("frame", [None, "world"])
def test_kinematics_with_t_eval_on_the_thin_path(method, frame):
    for t_span, t_eval in CALLS:
        assert _plan.thin_run(RATE, t_span, Q0, method, 1e-9, 1e-11, frame, {},
                              t_eval) is not None
        thin = rotode.integrate(RATE, t_span, Q0, method=method, rtol=1e-9, atol=1e-11,
                                t_eval=t_eval, frame=frame)
        general = rotode.integrate(RATE, t_span, Q0, method=method, rtol=1e-9, atol=1e-11,
                                   t_eval=t_eval, frame=frame, workers=None)
        _same(thin, general)


@pytest.mark.parametrize("method", sorted(dynamic.ENGINE_PAIRS))
def test_y0_sensitivity_with_t_eval_on_the_thin_path(method):
    for t_span, t_eval in CALLS:
        assert _plan.thin_sensitivity(TOP, t_span, Y0, method, 1e-9, 1e-11, None, {},
                                      t_eval) is not None
        thin = rotode.integrate(TOP, t_span, Y0, method=method, rtol=1e-9, atol=1e-11,
                                t_eval=t_eval, sensitivity=["y0"])
        general = rotode.integrate(TOP, t_span, Y0, method=method, rtol=1e-9, atol=1e-11,
                                   t_eval=t_eval, sensitivity=["y0"], workers=None)
        _same(thin, general)
        assert thin.sensitivity["y0"].shape == (len(t_eval), 6, 6)
        np.testing.assert_array_equal(thin.sensitivity["y0"], general.sensitivity["y0"][0]
                                      if general.sensitivity["y0"].ndim == 4
                                      else general.sensitivity["y0"])


def test_what_the_thin_path_declines_with_t_eval():
    # a t_eval outside the span, not monotonic, empty: the general path's errors
    for bad in ([2.5], [1.0, 0.5], []):
        assert _plan.thin_run(TOP, (0.0, 2.0), Y0, "dop853", 1e-9, None, None, {}, bad) is None
        with pytest.raises(ValueError, match="t_eval"):
            rotode.integrate(TOP, (0.0, 2.0), Y0, method="dop853", rtol=1e-9, t_eval=bad)
    # a user's ODE with t_eval: the general path (its result as before)
    ode = rotode.ODE(lambda t, y: -y, n=2)
    assert _plan.thin_run(ode, (0.0, 1.0), [1.0, 2.0], "dop853", 1e-9, None, None, {},
                          [0.5]) is None
    res = rotode.integrate(ode, (0.0, 1.0), [1.0, 2.0], method="dop853", rtol=1e-10,
                           atol=1e-12, t_eval=[0.5, 1.0])
    np.testing.assert_allclose(res.y, np.exp(-res.t)[:, None] * [1.0, 2.0], rtol=1e-8)
