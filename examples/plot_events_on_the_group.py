"""
Events on the rotation group
============================

Events stop or mark a run when something happens to the orientation or the angular velocity:
an axis passes a cone, the rotation from a reference exceeds an angle, a component of ``w``
changes sign, the kinetic energy crosses a value. rotode's events (:mod:`rotode.events`) are
compiled and located on the dense output of every accepted step to the spacing of floats, as
:func:`scipy.integrate.solve_ivp` locates its events (same ``terminal`` and ``direction``).
"""

# %%
# A top falls
# -----------
# A Lagrange top (``I = diag(1, 1, 0.5)`` about its pivot, ``m g h = 1``) spun at 3 rad/s is
# below its sleeping speed (4 rad/s here) and tips over. A terminal
# :class:`~rotode.events.AxisAngle` event stops the run when the body's symmetry axis passes
# 60 degrees from the vertical.
import matplotlib.pyplot as plt
import numpy as np

import rotode

top = rotode.RigidBody([1.0, 1.0, 0.5], torque=rotode.torque.Gravity(1.0, 1.0, [0, 0, 1]))
tilt = rotode.events.AxisAngle(body_axis=[0, 0, 1], world_axis=[0, 0, 1],
                               angle=np.radians(60), terminal=True, direction=+1)
t_eval = np.linspace(0, 30, 3001)
res = rotode.integrate(top, (0, 30), [1, 0, 0, 0, 0.3, 0.0, 3.0], method="rkmk8", rtol=1e-10,
                       atol=1e-12, t_eval=t_eval, events=tilt)
axis = rotode.quaternion.rotate(res.y_events[0][0, :4], [0.0, 0.0, 1.0])
print(f"status {res.status}: stopped at t = {res.t_stop:.10f} s, where the axis is "
      f"{np.degrees(np.arccos(axis[2])):.12f} deg from the vertical")

# %%
# The outputs after the stop are NaN; the tilt before it comes from the stored orientations.
keep = res.t <= res.t_stop
z = rotode.quaternion.rotate(res.q[keep], np.array([0.0, 0.0, 1.0]))
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
left.plot(res.t[keep], np.degrees(np.arccos(np.clip(z[:, 2], -1, 1))), color="tab:blue",
          label="tilt of the symmetry axis")
left.axhline(60, color="tab:gray", ls=":", label="60 deg: the terminal event")
left.axvline(res.t_stop, color="tab:red", ls="--", label=f"stop, t = {res.t_stop:.4f} s")
left.set(xlabel="t [s]", ylabel="tilt [deg]", title="A top below its sleeping speed")
left.legend(fontsize=8)

# %%
# Marking, not stopping: how far has the body turned?
# ---------------------------------------------------
# A gyroscope-driven orientation (the benchmark rates of Rucker 2018, body frame) with a
# non-terminal :class:`~rotode.events.RotationAngle` event in both directions: each time the
# rotation from the initial orientation passes 90 degrees, outwards (``direction=+1``) or back
# (``direction=-1``). Events need an error-controlled method: for a known ``w(t)``,
# ``magnus8`` with ``rtol``.
rates = rotode.omega.Sinusoid(amplitude=np.pi / 2, rate=np.pi / 5,
                              phase=[0, 2 * np.pi / 3, 4 * np.pi / 3])
away = rotode.events.RotationAngle(reference=[1, 0, 0, 0], angle=np.pi / 2, direction=+1)
back = rotode.events.RotationAngle(reference=[1, 0, 0, 0], angle=np.pi / 2, direction=-1)
t_eval = np.linspace(0, 60, 1201)
run = rotode.integrate(rates, (0, 60), [1, 0, 0, 0], method="magnus8", rtol=1e-10,
                       t_eval=t_eval, events=[away, back], frame="body")
angle = np.degrees(rotode.quaternion.angle_between(run.q, [1.0, 0, 0, 0]))
print(f"{len(run.t_events[0])} passes outwards, {len(run.t_events[1])} back, "
      f"in {run.stats['n_steps']} steps")
right.plot(run.t, angle, color="tab:blue", label="rotation from the start")
right.plot(run.t_events[0], np.full(len(run.t_events[0]), 90.0), "^", color="tab:red",
           label="90 deg, outwards")
right.plot(run.t_events[1], np.full(len(run.t_events[1]), 90.0), "v", color="tab:green",
           label="90 deg, back")
right.set(xlabel="t [s]", ylabel="angle [deg]", title="Rucker (2018) benchmark rates")
right.legend(fontsize=8)
fig.tight_layout()

# %%
# The same events work with SciPy: each is a plain callable ``event(t, y)`` with ``terminal``
# and ``direction``, for instance with ``scipy.integrate.solve_ivp(model, ...,
# method=rotode.RKMK8, events=tilt)``. A compiled event of your own derives from
# ``rotode.events.Event`` in Cython (:doc:`/cython`).
