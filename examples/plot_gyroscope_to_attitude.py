"""
Gyroscope samples to attitude
=============================

A gyroscope strapped to a body measures its angular velocity in the body frame, sample by
sample; integrating the samples gives the body's orientation (strapdown integration). This
example integrates a real recording: 10 s of fast hand-held rotations (up to 24 rad/s,
285.7 Hz) from trial 07 of the BROAD dataset (Laidig et al., *Data* 6(7), 2021; an excerpt is
in ``tests/data``), and compares the result with the optical motion-capture reference recorded
at the same time.
"""

# %%
# The recording
# -------------
# ``t`` in seconds, ``gyr`` the body-frame rates in rad/s, ``opt_quat`` the optical reference:
# unit quaternions ``[w, x, y, z]`` that map the sensor (body) frame to the room (world) frame,
# rotode's own conventions.
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import rotode

try:
    here = Path(__file__).resolve().parent
except NameError:               # the documentation build runs the examples in examples/
    here = Path.cwd()
with np.load(here.parent / "tests" / "data" / "broad_07_fast_rotation_B_excerpt.npz") as data:
    t, gyr, reference = data["t"], data["gyr"], data["opt_quat"]
print(f"{len(t)} samples over {t[-1]:.2f} s, up to {np.linalg.norm(gyr, axis=1).max():.1f} rad/s")

# %%
# Integrate the samples
# ---------------------
# :class:`rotode.omega.Samples` interpolates the samples (linearly by default: ``w`` is
# continuous, its derivative jumps at the sample times) and ``dt="samples"`` steps from one
# sample time to the next, so no step straddles a kink. The run starts from the reference's
# first orientation; ``t_eval=t`` keeps the state at every sample.
gyro = rotode.omega.Samples(t, gyr)
res = rotode.integrate(gyro, (t[0], t[-1]), reference[0], method="magnus8", dt="samples",
                       t_eval=t, frame="body")
drift = np.degrees(rotode.quaternion.angle_between(res.q, reference))
print(f"after {t[-1]:.1f} s the integrated attitude is {drift[-1]:.2f} deg from the optical "
      "reference")

# %%
# The gyroscope's own errors (bias, scale, noise) dominate the drift: the integrated attitude
# follows the reference to a few degrees over 10 s of rotations up to 24 rad/s, which also
# checks the conventions (body-frame rates, scalar-first quaternions, body-to-world
# orientation). The same rates read as world-frame rates agree while the rotations are small
# and end about a hundred degrees off once the fast rotations begin.
fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.5, 5.5), sharex=True)
top.plot(t, np.linalg.norm(gyr, axis=1), color="tab:gray", lw=0.8)
top.set(ylabel="|w| [rad/s]", title="BROAD trial 07: gyroscope rates")
bottom.plot(t[1:], drift[1:], color="tab:blue", label="magnus8, dt = samples")
wrong = rotode.integrate(gyro, (t[0], t[-1]), reference[0], method="magnus8", dt="samples",
                         t_eval=t, frame="world")
bottom.plot(t[1:], np.degrees(rotode.quaternion.angle_between(wrong.q, reference))[1:],
            color="tab:red", ls="--", label='the same rates read as frame="world"')
bottom.set(xlabel="t [s]", ylabel="angle to optical reference [deg]", yscale="log",
           ylim=(1e-2, 1e3))
bottom.legend()
fig.tight_layout()

# %%
# Which method?
# -------------
# Against the exact integral of the interpolated rates (``dop853`` with eight steps per sample
# interval), the first- and second-order updates (``lie_euler``, ``exp2``) add errors that are
# not small beside the sensor's own drift on rotations this fast; ``magnus_ca`` (the
# constant-acceleration step of control loops) and ``magnus4`` are far below it, and
# ``magnus8`` reaches round-off, at four evaluations of the interpolant per sample interval.
sub = np.sort(np.concatenate([t, (t[:-1, None] + np.diff(t)[:, None]
                                  * (np.arange(1, 8) / 8)).ravel()]))
exact = rotode.integrate(gyro, (t[0], t[-1]), reference[0], method="dop853", dt="samples",
                         t_eval=sub).q[-1]
for method in ("lie_euler", "exp2", "magnus_ca", "magnus4", "magnus8"):
    q = rotode.integrate(gyro, (t[0], t[-1]), reference[0], method=method, dt="samples").q[-1]
    error = np.degrees(rotode.quaternion.angle_between(q, exact))
    print(f"{method:>10}: {error:.1e} deg from the exact integral of the samples")
