"""The built-in rigid body (`rotode.RigidBody`) written as a user's equations (`rotode.ODE`).

State ``y = [q (4), w (3)]``: ``q`` scalar first, body to world, ``w`` the body rate (rad/s);
parameters ``p = [I1, I2, I3, tau1, tau2, tau3]``: the principal moments of inertia and a
constant torque in body axes (`rotode.torque.Constant(tau, frame="body")` of the built-in)::

    q' = 1/2 q (x) (0, w)
    w' = I^-1 (tau - w x I w)            (Euler's equations)

in the order of operations of rotode's own model (rotode/_models.hpp, ``RigidBodyModel``,
``I^-1`` applied as the product by ``1 / I_k``), so that the two differ at most by round-off.
`rhs_source` is the one source: numba compiles it as a ``cfunc`` of rotode's C signature
(`make_cfunc`); Python runs it on lists (`py_fun`).  Used by tests/test_ode_rigid_body.py and
benchmarks/bench_ode_rigid.py.
"""
import numpy as np

N_STATE = 7
N_PARAMS = 6


def params(inertia, torque=(0.0, 0.0, 0.0)):
    """The flat parameter vector: ``[I1, I2, I3, tau1, tau2, tau3]``."""
    return np.concatenate([np.asarray(inertia, dtype=float), np.asarray(torque, dtype=float)])


def rhs_source(t, y, dy, p):
    """dy = f(t, y; p) of a rigid body under a constant body torque; returns 0."""
    q0 = y[0]
    q1 = y[1]
    q2 = y[2]
    q3 = y[3]
    w0 = y[4]
    w1 = y[5]
    w2 = y[6]
    dy[0] = 0.5 * (-q1 * w0 - q2 * w1 - q3 * w2)
    dy[1] = 0.5 * (q0 * w0 + q2 * w2 - q3 * w1)
    dy[2] = 0.5 * (q0 * w1 - q1 * w2 + q3 * w0)
    dy[3] = 0.5 * (q0 * w2 + q1 * w1 - q2 * w0)
    Iw0 = p[0] * w0
    Iw1 = p[1] * w1
    Iw2 = p[2] * w2
    r0 = p[3] - (w1 * Iw2 - w2 * Iw1)
    r1 = p[4] - (w2 * Iw0 - w0 * Iw2)
    r2 = p[5] - (w0 * Iw1 - w1 * Iw0)
    dy[4] = (1.0 / p[0]) * r0
    dy[5] = (1.0 / p[1]) * r1
    dy[6] = (1.0 / p[2]) * r2
    return 0


def make_cfunc():
    """`rhs_source` as a numba ``cfunc`` of ``rotode.ODE.signature``."""
    import numba

    import rotode
    return numba.cfunc(rotode.ODE.signature, nopython=True)(rhs_source)


def py_fun(t, y, p):
    """`rhs_source` in plain Python: ``fun(t, y, p) -> dydt``."""
    out = [0.0] * 7
    rhs_source(t, y.tolist(), out, p.tolist())
    return np.array(out)


def built_in(inertia, torque=(0.0, 0.0, 0.0)):
    """The same body as `rotode.RigidBody` (principal inertia, a constant body torque)."""
    import rotode
    return rotode.RigidBody(inertia, torque=rotode.torque.Constant(torque, frame="body"))


def settings(method):
    """The step control of a comparison run: ``dt`` for the fixed-step methods, else rtol
    1e-10 and atol 1e-12; ``normalize=False`` for the methods on the state (the built-in rigid
    body integrates q' as written, as does the ODE without its projection)."""
    import rotode
    spec = rotode.methods.get(method)
    kw = dict(rtol=1e-10, atol=1e-12) if spec.adaptive else dict(dt=1e-2)
    group = method.startswith("rkmk")
    return kw, ({} if group else {"normalize": False})
