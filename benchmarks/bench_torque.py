"""The gravity-gradient torque of a circular orbit: built in, compiled by the user, in Python.

Run from the repository root after building:  python benchmarks/bench_torque.py [--quick]

One satellite (principal moments 90, 100, 40 kg m^2, orbit rate 1.1e-3 rad/s, 5 degrees off
the orbit frame in pitch) for one orbit with ``rkmk8`` at rtol 1e-10, output at the end only.
The same torque ``3 n^2 o3 x (I o3)`` four ways:

- ``rotode.torque.GravityGradient`` (built in, compiled, no GIL);
- ``rotode.torque.Compiled`` of a numba ``cfunc`` (skipped without numba);
- ``rotode.torque.Callable`` of a NumPy function (``tau(t, q, w)``, the GIL at every call);
- the built-in torque plus a zero ``Constant`` as a ``Sum`` (the cost of a sum's loop).

Prints the best of repeated runs (one BLAS thread), the torque evaluations, the time per
evaluation and the largest difference of the final attitude from the built-in run.  A speed
sanity check, not a test: the issue's report was 13 ms per orbit for a Python callable and
0.3 ms for the same torque written in Cython.
"""
import os
import sys
import timeit

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import rotode  # noqa: E402
from rotode import quaternion, torque  # noqa: E402

N = 1.1e-3
INERTIA = np.array([90.0, 100.0, 40.0])
ORBIT = 2 * np.pi / N


def python_gravity_gradient(t, q, w):
    nadir = -np.array([np.cos(N * t), np.sin(N * t), 0.0])
    o3 = quaternion.rotate(quaternion.conjugate(q), nadir)
    return 3.0 * N * N * np.cross(o3, INERTIA * o3)


def numba_gravity_gradient():
    """The same torque as a numba cfunc of rotode.torque.Compiled.signature, or None."""
    try:
        import numba
    except ImportError:
        return None

    @numba.cfunc(torque.Compiled.signature)
    def tau(t, q, w, out, p):
        n, c, s = p[0], np.cos(p[0] * t), np.sin(p[0] * t)
        # o3 = R(q)^T (-c, -s, 0) for a unit q
        w0, x, y, z = q[0], q[1], q[2], q[3]
        o0 = -c * (1 - 2 * (y * y + z * z)) - s * 2 * (x * y + w0 * z)
        o1 = -c * 2 * (x * y - w0 * z) - s * (1 - 2 * (x * x + z * z))
        o2 = -c * 2 * (x * z + w0 * y) - s * 2 * (y * z - w0 * x)
        i0, i1, i2 = p[1] * o0, p[2] * o1, p[3] * o2
        k = 3.0 * n * n
        out[0] = k * (o1 * i2 - o2 * i1)
        out[1] = k * (o2 * i0 - o0 * i2)
        out[2] = k * (o0 * i1 - o1 * i0)
        return 0

    return torque.Compiled(tau, [N, *INERTIA])


def main(quick=False):
    frame0 = np.column_stack([[0, 1, 0], [0, 0, -1], [-1, 0, 0]])
    q0 = quaternion.multiply(quaternion.from_matrix(frame0),
                             quaternion.exp(np.array([0.0, np.radians(5.0) / 2, 0.0])))
    y0 = np.concatenate([q0, [0.0, -N, 0.0]])
    builtin = torque.GravityGradient(INERTIA, N)
    sources = {"GravityGradient (built in)": builtin,
               "Compiled (numba cfunc)": numba_gravity_gradient(),
               "Callable (NumPy)": python_gravity_gradient,
               "Sum(GravityGradient, Constant 0)": builtin + torque.Constant([0.0, 0.0, 0.0])}
    repeat = 3 if quick else 7
    ref = None
    print(f"one orbit ({ORBIT:.0f} s), rkmk8, rtol 1e-10; best of {repeat}")
    print(f"{'torque':>34} {'ms/orbit':>9} {'evals':>6} {'us/eval':>8} {'max |dq|':>9}")
    for name, source in sources.items():
        if source is None:
            print(f"{name:>34}   (numba not installed)")
            continue
        model = rotode.RigidBody(INERTIA, torque=source)

        def run(model=model):
            return rotode.integrate(model, (0.0, ORBIT), y0, method="rkmk8", rtol=1e-10,
                                    atol=1e-12)

        res = run()
        ref = res if ref is None else ref
        number = 1 if "Callable" in name else (3 if quick else 20)
        t = min(timeit.repeat(run, number=number, repeat=repeat)) / number
        nfev = res.stats["nfev"]
        print(f"{name:>34} {t * 1e3:9.3f} {nfev:6d} {t / nfev * 1e6:8.3f} "
              f"{np.abs(res.q[-1] - ref.q[-1]).max():9.1e}")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
