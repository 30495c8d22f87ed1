"""
Writing a compiled torque in Cython
===================================

A torque written in Python is called with the GIL at every stage of every step. Written in
Cython as a subclass of :class:`rotode.torque.Torque`, the same torque runs inside rotode's
compiled loop without the GIL, which matters for long runs and for many bodies. This example
writes the gravity-gradient torque of the :doc:`satellite example
<plot_satellite_gravity_gradient>` in Cython, builds it (a few seconds; it needs Cython and a
C++17 compiler), and checks it against the Python version. (That torque is built in as
:class:`rotode.torque.GravityGradient`; a C function or a numba ``cfunc`` needs no build step
through :class:`rotode.torque.Compiled`.)
"""

# %%
# The Cython source
# -----------------
# The class overrides one C method, ``evaluate(t, q, w, tau)``: ``q`` is the orientation (of
# any nonzero length), ``w`` the body angular velocity, and ``tau`` receives the body-frame
# torque; it returns 0 (a nonzero status stops the run). rotode's own kernels are
# ``cimport``-able, here ``quat_rotate`` and ``quat_conj`` (``R(q)^T c`` is ``R(conj(q)) c``).
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import rotode
from rotode import quaternion

SOURCE = textwrap.dedent('''
    # distutils: language = c++
    from libc.math cimport cos, sin
    from rotode.quaternion cimport quat_conj, quat_rotate
    from rotode.torque cimport Torque


    cdef class GravityGradient(Torque):
        """tau = 3 n^2 c x (I c), c the unit vector to the Earth's centre in body axes, for a
        circular orbit of rate n in the world x-y plane (Hughes 1986, ch. 8)."""
        cdef double n
        cdef double inertia[3]

        def __init__(self, mean_motion, inertia):
            self.n = mean_motion
            for i in range(3):
                self.inertia[i] = inertia[i]

        cdef int evaluate(self, double t, const double* q, const double* w,
                          double* tau) noexcept nogil:
            cdef double nadir[3]
            cdef double qc[4]
            cdef double c[3]
            cdef double ic[3]
            cdef double k = 3.0 * self.n * self.n
            nadir[0] = -cos(self.n * t)
            nadir[1] = -sin(self.n * t)
            nadir[2] = 0.0
            quat_conj(q, qc)
            quat_rotate(qc, nadir, c)          # R(q)^T nadir, for any nonzero q
            for i in range(3):
                ic[i] = self.inertia[i] * c[i]
            tau[0] = k * (c[1] * ic[2] - c[2] * ic[1])
            tau[1] = k * (c[2] * ic[0] - c[0] * ic[2])
            tau[2] = k * (c[0] * ic[1] - c[1] * ic[0])
            return 0
''')

# %%
# Building it
# -----------
# A downstream module compiles as C++17 and finds rotode's ``.pxd`` files through
# :func:`rotode.get_include` (the same ``setup.py`` as in :doc:`/cython`).
SETUP = textwrap.dedent('''
    import os

    import rotode
    from Cython.Build import cythonize
    from setuptools import Extension, setup

    include = rotode.get_include()
    extension = Extension("gravity_gradient", ["gravity_gradient.pyx"], language="c++",
                          include_dirs=[include], extra_compile_args=["-std=c++17", "-O2"])
    setup(ext_modules=cythonize([extension], include_path=[os.path.dirname(include)],
                                quiet=True))
''')
build = Path(tempfile.mkdtemp(prefix="rotode-example-"))
(build / "gravity_gradient.pyx").write_text(SOURCE)
(build / "setup.py").write_text(SETUP)
env = dict(os.environ, PYTHONPATH=os.pathsep.join(
    [str(Path(rotode.get_include()).parent), os.environ.get("PYTHONPATH", "")]))
start = time.perf_counter()
subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace", "-q"], cwd=build,
               env=env, check=True, capture_output=True)
print(f"built in {time.perf_counter() - start:.1f} s")
sys.path.insert(0, str(build))
from gravity_gradient import GravityGradient  # noqa: E402

# %%
# The same torque in Python
# -------------------------
MU, RADIUS = 3.986004418e14, 7.0e6
N = np.sqrt(MU / RADIUS**3)
ORBIT = 2 * np.pi / N
inertia = np.array([90.0, 100.0, 40.0])


def python_gravity_gradient(t, q, w):
    nadir = -np.array([np.cos(N * t), np.sin(N * t), 0.0])
    c = quaternion.rotate(quaternion.conjugate(q), nadir)
    return 3.0 * N**2 * np.cross(c, inertia * c)


# %%
# Both on one satellite, and on a thousand
# ----------------------------------------
# The satellite starts 5 degrees off its orbit-following attitude in pitch, as in the
# satellite example. The two torques give the same trajectory (to rounding differences); the
# compiled one spends no time in Python. A batch of 1000 satellites with dispersed initial
# pitch runs on two threads, which a Python torque (holding the GIL) could not use.
frame0 = np.column_stack([[0, 1, 0], [0, 0, -1], [-1, 0, 0]])
q0 = quaternion.multiply(quaternion.from_matrix(frame0),
                         quaternion.exp(np.array([0.0, np.radians(5.0) / 2, 0.0])))
y0 = np.concatenate([q0, [0.0, -N, 0.0]])
t_eval = np.linspace(0.0, 10 * ORBIT, 2001)
runs, times = {}, {}
for name, torque in (("Python callable", python_gravity_gradient),
                     ("Cython class", GravityGradient(N, inertia))):
    model = rotode.RigidBody(inertia, torque=torque)
    start = time.perf_counter()
    runs[name] = rotode.integrate(model, (0.0, t_eval[-1]), y0, method="rkmk8", rtol=1e-12,
                                  atol=1e-14, t_eval=t_eval)
    times[name] = time.perf_counter() - start
    print(f"{name:>16}: {runs[name].stats['nfev']} torque evaluations in "
          f"{times[name] * 1e3:.1f} ms")
gap = np.degrees(rotode.quaternion.angle_between(runs["Python callable"].q,
                                                 runs["Cython class"].q)).max()
print(f"largest difference between the two trajectories: {gap:.1e} deg")

batch = np.tile(y0, (1000, 1))
pitch = np.radians(np.random.default_rng(0).uniform(-10, 10, 1000))
batch[:, :4] = quaternion.multiply(quaternion.from_matrix(frame0),
                                   quaternion.exp(np.column_stack([0 * pitch, pitch / 2,
                                                                   0 * pitch])))
start = time.perf_counter()
many = rotode.integrate(rotode.RigidBody(inertia, torque=GravityGradient(N, inertia)),
                        (0.0, t_eval[-1]), batch, method="rkmk8", rtol=1e-12, atol=1e-14,
                        workers=2)
print(f"1000 satellites, compiled torque, 2 threads: {time.perf_counter() - start:.2f} s")

fig, ax = plt.subplots(figsize=(7, 3))
ax.barh(list(times), [1e3 * v for v in times.values()], color=["tab:gray", "tab:blue"])
ax.set(xlabel="wall time when this page was built [ms]",
       title="10 orbits of one satellite, rkmk8 at rtol 1e-12")
fig.tight_layout()

shutil.rmtree(build, ignore_errors=True)     # the module stays loaded
