"""
Moving from ``scipy.integrate.solve_ivp``
=========================================

Code that integrates attitude with :func:`scipy.integrate.solve_ivp` moves to rotode in steps,
each keeping the same answer: first a compiled right-hand side, then rotode's compiled loop
behind the same call, then a method on the rotation group. The times printed below were
measured when this page was built (on a shared machine: compare them with each other, not
across machines).
"""

# %%
# The starting point: a NumPy right-hand side
# -------------------------------------------
# A torque-free rigid body (the T-handle, principal moments ``(2.5, 1.4, 1.3)``) with state
# ``[q (4), w_body (3)]``: ``q' = 1/2 q (x) w``, ``I w' = -w x I w``.
import time

import matplotlib.pyplot as plt
import numpy as np
from scipy.integrate import solve_ivp

import rotode

INERTIA = np.array([2.5, 1.4, 1.3])


def numpy_rigid_body(t, y):
    q, w = y[:4], y[4:]
    dq = 0.5 * np.array([-q[1] * w[0] - q[2] * w[1] - q[3] * w[2],
                         q[0] * w[0] + q[2] * w[2] - q[3] * w[1],
                         q[0] * w[1] - q[1] * w[2] + q[3] * w[0],
                         q[0] * w[2] + q[1] * w[1] - q[2] * w[0]])
    return np.concatenate([dq, -np.cross(w, INERTIA * w) / INERTIA])


y0 = np.array([1.0, 0, 0, 0, 0.01, 5.0, 0.01])
span, tol = (0.0, 100.0), dict(rtol=1e-10, atol=1e-12)
t_eval = np.linspace(*span, 2001)


def timed(run, repeat=3):
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        out = run()
        best = min(best, time.perf_counter() - start)
    return best, out


times, results = {}, {}
times["SciPy + NumPy rhs"], results["SciPy + NumPy rhs"] = timed(
    lambda: solve_ivp(numpy_rigid_body, span, y0, method="DOP853", t_eval=t_eval, **tol), 1)

# %%
# Step 1: a compiled right-hand side
# ----------------------------------
# :class:`rotode.RigidBody` is a right-hand side ``fun(t, y)`` with the same state; SciPy still
# runs the loop and calls it once per stage. It also has ``.jac`` (exact, by dual numbers) for
# the implicit SciPy methods: ``solve_ivp(body, ..., method="Radau", jac=body.jac)``.
body = rotode.RigidBody(INERTIA)
times["SciPy + rotode rhs"], results["SciPy + rotode rhs"] = timed(
    lambda: solve_ivp(body, span, y0, method="DOP853", t_eval=t_eval, **tol))

# %%
# Step 2: the same call, the loop compiled
# ----------------------------------------
# :func:`rotode.solve_ivp` has SciPy's signature and returns SciPy's result. With a rotode model
# and ``method="RK45"`` or ``"DOP853"`` it runs SciPy's method (its pair, step-size controller,
# initial step, error norms and dense output, so the same steps) in compiled code; anything
# else it hands to SciPy.
times["rotode.solve_ivp"], results["rotode.solve_ivp"] = timed(
    lambda: rotode.solve_ivp(body, span, y0, method="DOP853", t_eval=t_eval, **tol))

# %%
# Step 3: rotode's own interface and a method on the rotation group
# -----------------------------------------------------------------
# :func:`rotode.integrate` takes a method name (``rkmk8``: the DOP853 pair on the rotation group,
# so every state is a unit quaternion), returns ``q``, ``w`` and a SciPy ``Rotation``, and
# integrates many bodies at once when ``y0`` has one row per body.
times["rotode.integrate rkmk8"], res = timed(
    lambda: rotode.integrate(body, span, y0, method="rkmk8", t_eval=t_eval, **tol))
results["rotode.integrate rkmk8"] = res

# %%
# The answers agree
# -----------------
# Against the exact solution (:func:`rotode.exact.free_rigid_body`), every run has the error of
# its tolerance; the times differ.
q_exact = rotode.exact.free_rigid_body(INERTIA, y0[4:], t_eval, q0=y0[:4])[0]
for name, r in results.items():
    q = r.q if name.startswith("rotode.integrate") else r.y[:4].T
    error = np.degrees(rotode.quaternion.angle_between(q, q_exact)).max()
    print(f"{name:>24}: {times[name] * 1e3:8.2f} ms, largest error {error:.1e} deg")

fig, ax = plt.subplots(figsize=(7, 3.2))
names = list(times)
ax.barh(names, [times[k] * 1e3 for k in names], color=["tab:gray", "tab:olive", "tab:blue",
                                                        "tab:green"])
ax.set(xscale="log", xlabel="wall time when this page was built [ms] (log scale)",
       title="The T-handle for 100 s at rtol 1e-10, output at 2001 times")
ax.invert_yaxis()
fig.tight_layout()
