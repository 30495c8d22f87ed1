"""
A satellite with gravity-gradient torque
========================================

A satellite in a circular orbit feels a torque from the gradient of the Earth's gravity across
its body: the end nearer the Earth is pulled harder. With the principal moments in the right
order, the torque holds the satellite's long axis along the local vertical, and a satellite
that starts slightly off oscillates about that attitude (it librates) instead of drifting.
This example writes the torque as a Python callable ``tau(t, q, w)``, checks the libration
against linear theory, and compares it with rotode's compiled one,
:class:`rotode.torque.GravityGradient`, which runs without Python per evaluation.

Reference: P. C. Hughes, *Spacecraft Attitude Dynamics*, Wiley, 1986, ch. 8 (the gravity-gradient
torque, and the libration of gravity-gradient satellites).
"""

# %%
# The torque
# ----------
# For a circular orbit of radius ``r`` the torque about the centre of mass, in body
# coordinates, is ``tau = 3 n^2 c x (I c)``, with ``n = sqrt(mu / r^3)`` the orbital rate and
# ``c`` the unit vector from the satellite to the Earth's centre in body coordinates. The orbit
# lies in the world x-y plane, so at time ``t`` the satellite is at ``r [cos nt, sin nt, 0]``
# and ``c = R(q)^T [-cos nt, -sin nt, 0]``.
import matplotlib.pyplot as plt
import numpy as np

import rotode
from rotode import quaternion

MU = 3.986004418e14                     # the Earth's gravitational parameter [m^3/s^2]
RADIUS = 7.0e6                          # orbit radius [m]: about 630 km altitude
N = np.sqrt(MU / RADIUS**3)             # orbital rate [rad/s]
ORBIT = 2 * np.pi / N                   # orbital period [s]


def gravity_gradient(inertia):
    """The gravity-gradient torque tau(t, q, w) of a body with principal moments ``inertia``."""
    inertia = np.asarray(inertia, dtype=float)

    def tau(t, q, w):
        nadir_world = -np.array([np.cos(N * t), np.sin(N * t), 0.0])
        c = quaternion.rotate(quaternion.conjugate(q), nadir_world)   # R(q)^T: any |q| > 0
        return 3.0 * N**2 * np.cross(c, inertia * c)

    return tau


# %%
# The satellite and its nominal attitude
# --------------------------------------
# The nominal attitude follows the orbit (local vertical, local horizontal): body z towards the
# Earth, body x along the velocity, body y against the orbit normal. At ``t = 0`` that is the
# rotation with columns ``e_y, -e_z, -e_x``, and the body turns at the orbital rate about its y
# axis, ``w_body = (0, -n, 0)``. The moments ``I_y > I_x > I_z`` make the nominal attitude
# stable (the Lagrange region); the pitch oscillates about body y with the angular frequency
# ``n sqrt(3 (I_x - I_z) / I_y)``.
inertia = np.array([90.0, 100.0, 40.0])                       # kg m^2
frame0 = np.column_stack([[0, 1, 0], [0, 0, -1], [-1, 0, 0]])  # body axes in the world
q_lvlh0 = quaternion.from_matrix(frame0)
pitch0 = np.radians(5.0)                                      # start 5 degrees off in pitch
q0 = quaternion.multiply(q_lvlh0, quaternion.exp(np.array([0.0, pitch0 / 2, 0.0])))
y0 = np.concatenate([q0, [0.0, -N, 0.0]])

satellite = rotode.RigidBody(inertia, torque=gravity_gradient(inertia))
t = np.linspace(0.0, 3 * ORBIT, 601)
res = rotode.integrate(satellite, (0.0, t[-1]), y0, method="rkmk8", rtol=1e-10, atol=1e-12,
                       t_eval=t)
print(res.message, f"({res.stats['n_steps']} steps over three orbits)")


# %%
# The attitude relative to the orbit frame
# ----------------------------------------
# The nominal attitude at time ``t`` is the initial one turned about the orbit normal (world z)
# by ``n t``. The rotation from it to the satellite's attitude, as a rotation vector in body
# coordinates, gives roll, pitch and yaw for small angles.
def relative_attitude(q, t):
    turn = quaternion.exp(np.column_stack([np.zeros((len(t), 2)), N * t / 2]))
    nominal = quaternion.multiply(turn, q_lvlh0)
    return np.degrees(2 * quaternion.log(quaternion.multiply(quaternion.conjugate(nominal), q))
                      [:, 1:])


# The built-in torque of the same orbit (in the world x-y plane, the satellite on the x axis at
# t = 0: ``argument_of_latitude``, ``inclination`` and ``raan`` are 0) gives the same run.
builtin = rotode.integrate(rotode.RigidBody(inertia, torque=rotode.torque.GravityGradient(
    inertia, N)), (0.0, t[-1]), y0, method="rkmk8", rtol=1e-10, atol=1e-12, t_eval=t)
print(f"built-in torque: largest difference {np.abs(builtin.q - res.q).max():.1e}")

angles = relative_attitude(res.q, res.t)
theory = np.degrees(pitch0) * np.cos(N * np.sqrt(3 * (inertia[0] - inertia[2]) / inertia[1])
                                     * res.t)
crossings = res.t[1:][np.diff(np.sign(angles[:, 1])) != 0]
period = 2 * np.mean(np.diff(crossings))
print(f"pitch libration period: {period / ORBIT:.4f} orbits integrated, "
      f"{1 / np.sqrt(3 * (inertia[0] - inertia[2]) / inertia[1]):.4f} from linear theory")

# %%
# Without the torque, the same satellite keeps turning at the orbital rate about its own y axis
# and its 5 degree offset stays; with the moments in the wrong order (``I_x < I_z``) the same
# torque makes the nominal attitude unstable, and the pitch swings far away from it.
free = rotode.integrate(rotode.RigidBody(inertia), (0.0, t[-1]), y0, method="rkmk8",
                        rtol=1e-10, atol=1e-12, t_eval=t)
unstable_inertia = np.array([40.0, 100.0, 90.0])
unstable = rotode.integrate(rotode.RigidBody(unstable_inertia,
                                             torque=gravity_gradient(unstable_inertia)),
                            (0.0, t[-1]), y0, method="rkmk8", rtol=1e-10, atol=1e-12,
                            t_eval=t)

fig, ax = plt.subplots(figsize=(7.5, 4.2))
orbits = res.t / ORBIT
ax.plot(orbits, angles[:, 1], color="tab:blue", lw=2, label="pitch, gravity gradient (rkmk8)")
ax.plot(orbits, theory, color="black", ls="--", lw=1, label="pitch, linear theory")
ax.plot(orbits, relative_attitude(free.q, free.t)[:, 1], color="tab:green", ls="-.",
        label="pitch, no torque")
ax.plot(orbits, relative_attitude(unstable.q, unstable.t)[:, 1], color="tab:red", ls=":",
        lw=2, label="pitch, I_x < I_z (unstable)")
ax.set(xlabel="time [orbits]", ylabel="angle from the orbit frame [deg]", ylim=(-20, 20),
       title=f"Gravity-gradient libration, circular orbit of {ORBIT / 60:.0f} min")
ax.legend(fontsize=8, loc="lower left")
fig.tight_layout()
