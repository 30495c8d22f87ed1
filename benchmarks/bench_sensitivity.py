"""The cost of an exact sensitivity (issue 30, docs/sensitivity.md): a plain run of the upright
Lagrange top against the same run with its full 6x6 ``y0`` sensitivity, and against central
differences (13 runs: the reference and +-eps along each of the 6 tangent directions).

Run from the clone's root after building rotode (``python setup.py build_ext --inplace``):

    python benchmarks/bench_sensitivity.py [--quick] [--T SECONDS] [--jax]

The top is benchmarks/bench_engine.py's (Rucker 2018 sec. IV: I = diag(1, 1, 0.5), m g h = 1,
w0 = (1.5, 0, 1)), integrated over (0, T) (T = 10 s unless given) at rtol 1e-10, atol 1e-12,
only the final state kept, by ``dop853`` (the state's pair, whose sensitivity the engine
carries in the run's own pass) and ``rkmk8`` (Runge-Kutta-Munthe-Kaas on the group, whose
sensitivity is the dual-number replay of its recorded steps).  Timing: bench_engine.py's
`measure` (one process, the tools alternated in batches of about 2 ms, the minimum over the
turns).  The error of central differences (eps = 1e-6 on [dtheta0, dw0]) is the largest entry
of their difference from the exact sensitivity, relative to its largest entry.

With ``--fixed``: the fixed-step methods instead (1000 steps of ``dt`` = 0.01 of a gravity top,
I = diag(1.2, 1.7, 2.3), the final state kept): the plain run, with the ``y0`` sensitivity (one
pass of six directions) and with ``y0`` and ``inertia`` (two passes); ``rk4`` and ``ab3`` by the
compiled passes (rotode/_tangent_fixed.hpp), ``rkn4`` and ``implicit_midpoint`` by the replay.

With ``--jax`` (``pip install jax diffrax``, the ``bench`` extra): ``jax.jacfwd`` through
``diffrax.diffeqsolve(Dopri8)`` at the same tolerances (a PID controller with SciPy's
defaults), jit-compiled, on the CPU, for the Jacobian of the final [q, w] by [q0, w0].
"""
import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from bench_engine import Run, measure  # noqa: E402
from scipy.spatial.transform import Rotation  # noqa: E402

import rotode  # noqa: E402
from rotode.studies import T_HANDLE, TOP_INERTIA, TOP_W0  # noqa: E402

RTOL, ATOL, EPS = 1e-10, 1e-12, 1e-6
METHODS = ("dop853", "rkmk8")


def top():
    """The upright Lagrange top and its initial state."""
    gravity = rotode.torque.Gravity(1.0, 1.0, [0.0, 0.0, 1.0])
    return (rotode.RigidBody(TOP_INERTIA, torque=gravity),
            np.concatenate([[1.0, 0.0, 0.0, 0.0], TOP_W0]))


def t_handle():
    """The torque-free T-handle (the Dzhanibekov effect) and its initial state."""
    return rotode.RigidBody(T_HANDLE), np.array([1.0, 0.0, 0.0, 0.0, 0.05, 5.0, 0.05])


def _tangent(y, ref):
    """[dtheta, dw] of a row y near ref (q = q_ref exp(dtheta/2))."""
    rel = (Rotation.from_quat(ref[:4], scalar_first=True).inv()
           * Rotation.from_quat(y[:4], scalar_first=True))
    return np.r_[rel.as_rotvec(), y[4:] - ref[4:]]


def _perturbed(y0, j, eps):
    y = np.array(y0, dtype=float)
    if j < 3:
        e = np.zeros(3)
        e[j] = eps
        y[:4] = (Rotation.from_quat(y0[:4], scalar_first=True)
                 * Rotation.from_rotvec(e)).as_quat(scalar_first=True)
    else:
        y[1 + j] += eps
    return y


def central_differences(model, y0, T, method):
    """The 6x6 sensitivity of the final row by central differences (13 runs)."""
    def final(y):
        return rotode.integrate(model, (0, T), y, method=method, rtol=RTOL, atol=ATOL).y[-1]

    ref = final(y0)
    cols = [(_tangent(final(_perturbed(y0, j, EPS)), ref)
             - _tangent(final(_perturbed(y0, j, -EPS)), ref)) / (2 * EPS) for j in range(6)]
    return np.array(cols).T


def jax_run(y0, T):
    """`Run` of jax.jacfwd through diffrax's Dopri8 (jit, CPU) and its Jacobian, or None."""
    try:
        import diffrax
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platform_name", "cpu")
    moments = jnp.asarray(TOP_INERTIA)

    def f(t, y, args):
        q, w = y[:4], y[4:]
        dq = 0.5 * jnp.array([-q[1] * w[0] - q[2] * w[1] - q[3] * w[2],
                              q[0] * w[0] + q[2] * w[2] - q[3] * w[1],
                              q[0] * w[1] - q[1] * w[2] + q[3] * w[0],
                              q[0] * w[2] + q[1] * w[1] - q[2] * w[0]])
        n2 = q @ q
        d = jnp.array([2 * (q[1] * q[3] - q[0] * q[2]), 2 * (q[2] * q[3] + q[0] * q[1]),
                       q[0] ** 2 - q[1] ** 2 - q[2] ** 2 + q[3] ** 2]) * (-1.0 / n2)
        tau = jnp.cross(jnp.array([0.0, 0.0, 1.0]), d)
        return jnp.concatenate([dq, (tau - jnp.cross(w, moments * w)) / moments])

    def solve(y):
        sol = diffrax.diffeqsolve(diffrax.ODETerm(f), diffrax.Dopri8(), 0.0, T, None, y,
                                  stepsize_controller=diffrax.PIDController(rtol=RTOL,
                                                                            atol=ATOL),
                                  adjoint=diffrax.ForwardMode(), max_steps=100_000)
        return sol.ys[-1]

    jac = jax.jit(jax.jacfwd(solve))
    y = jnp.asarray(y0)
    jac(y).block_until_ready()
    return Run(lambda: jac(y).block_until_ready(), None)


FIXED = ("rk4", "ab3", "rkn4", "implicit_midpoint")


def fixed_steps(repeat):
    """The table of the fixed-step methods (``--fixed``)."""
    gravity = rotode.torque.Gravity(1.0, 9.81, [0.02, -0.01, 0.3])
    body = rotode.RigidBody([1.2, 1.7, 2.3], torque=gravity)
    y0 = np.r_[Rotation.from_rotvec([0.3, -0.5, 0.8]).as_quat(scalar_first=True),
               0.4, 1.1, -0.3]
    print(f"gravity top, 1000 steps of dt 0.01, final state; minimum of {repeat} alternated "
          "turns")
    print(f"{'method':18} {'plain':>9} {'y0':>9} {'ratio':>6} {'y0+inertia':>11} {'ratio':>6}")
    for m in FIXED:
        runs = {name: Run(lambda m=m, s=sens: rotode.integrate(body, (0, 10), y0, method=m,
                                                               dt=0.01, sensitivity=s), None)
                for name, sens in (("plain", None), ("y0", ["y0"]),
                                   ("both", ["y0", "inertia"]))}
        s = measure(runs, repeat)
        print(f"{m:18} {s['plain'] * 1e3:7.3f}ms {s['y0'] * 1e3:7.3f}ms "
              f"{s['y0'] / s['plain']:5.1f}x {s['both'] * 1e3:9.3f}ms "
              f"{s['both'] / s['plain']:5.1f}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 turns instead of 12")
    parser.add_argument("--fixed", action="store_true", help="the fixed-step methods")
    parser.add_argument("--T", type=float, default=10.0, help="the span (0, T), seconds")
    parser.add_argument("--jax", action="store_true", help="also jax.jacfwd through diffrax")
    parser.add_argument("--body", choices=("top", "thandle"), default="top",
                        help="the upright Lagrange top (default) or the torque-free T-handle, "
                             "I = (2.5, 1.4, 1.3), w0 = (0.05, 5, 0.05)")
    args = parser.parse_args()
    if args.jax and args.body != "top":
        parser.error("--jax times the top only")
    repeat = 4 if args.quick else 12
    if args.fixed:
        return fixed_steps(repeat)
    model, y0 = top() if args.body == "top" else t_handle()
    T = args.T
    name = "upright Lagrange top" if args.body == "top" else "torque-free T-handle"
    print(f"{name}, (0, {T:g}), rtol {RTOL:g}, atol {ATOL:g}; "
          f"minimum of {repeat} alternated turns")
    print(f"{'method':8} {'steps':>6} {'plain':>10} {'6x6 y0':>10} {'ratio':>6} "
          f"{'13 runs':>10} {'ratio':>6} {'FD error':>9}")
    sens_dop853 = None
    for m in METHODS:
        call = dict(method=m, rtol=RTOL, atol=ATOL)
        runs = {
            "plain": Run(lambda m=m, c=call: rotode.integrate(model, (0, T), y0, **c), None),
            "sens": Run(lambda m=m, c=call: rotode.integrate(model, (0, T), y0,
                                                             sensitivity=["y0"], **c), None),
            "fd": Run(lambda m=m: central_differences(model, y0, T, m), None),
        }
        s = measure(runs, repeat)
        exact = rotode.integrate(model, (0, T), y0, sensitivity=["y0"], **call)
        plain = rotode.integrate(model, (0, T), y0, **call)
        assert np.array_equal(exact.y, plain.y) or m != "dop853"
        fd = central_differences(model, y0, T, m)
        phi = exact.sensitivity["y0"][-1]
        err = np.abs(fd - phi).max() / np.abs(phi).max()
        sens_dop853 = s["sens"] if m == "dop853" else sens_dop853
        print(f"{m:8} {plain.stats['n_steps']:6d} {s['plain'] * 1e3:8.3f}ms "
              f"{s['sens'] * 1e3:8.3f}ms {s['sens'] / s['plain']:5.1f}x "
              f"{s['fd'] * 1e3:8.3f}ms {s['fd'] / s['plain']:5.1f}x {err:9.1e}")
    if args.jax:
        run = jax_run(y0, T)
        if run is None:
            print("jax/diffrax: not installed (pip install jax diffrax)")
        else:
            s = measure({"jax": run}, repeat)
            print(f"jax.jacfwd(diffeqsolve(Dopri8)), jit, CPU: {s['jax'] * 1e3:.3f} ms "
                  f"({s['jax'] / sens_dop853:.1f}x rotode's dop853 with its 6x6 y0 "
                  "sensitivity)")


if __name__ == "__main__":
    main()
