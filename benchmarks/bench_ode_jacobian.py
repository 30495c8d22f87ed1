"""The cost of the sensitivities of a user's equations with and without its Jacobians (issue
30, docs/sensitivity.md): ``rotode.integrate(ode, ..., sensitivity=["y0", "params"])`` of an
8-state Python ``f`` (tests/test_ode_sensitivity.py's rigid body under a constant torque with a
decaying scalar: 7 tangent directions, 7 parameters), ``rk4`` with ``dt`` = 0.02 over (0, 2)
(100 steps, 400 stages), the final state kept.  Four runs: without sensitivities; with them by
central differences of ``f`` (2 calls per direction and stage: 28 + 1); with ``jac`` (df/dy)
and central differences along the parameters only (14 + 1 + 1 jac); with ``jac`` and
``jac_params`` (1 + 2 calls).  Timing: the minimum over 5 repeats of the mean of 3 runs.

Run from the clone's root after building rotode (``python setup.py build_ext --inplace``):

    python benchmarks/bench_ode_jacobian.py
"""
import sys
import timeit
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from test_ode_jacobian import _model, rigid_jac, rigid_jac_params  # noqa: E402
from test_ode_sensitivity import Y0  # noqa: E402

import rotode  # noqa: E402


def main():
    y0 = np.r_[Y0, 1.0]
    cases = (("no sensitivity", _model(), None), ("central differences", _model(), 1),
             ("jac, differences along params", _model(rigid_jac), 1),
             ("jac and jac_params", _model(rigid_jac, rigid_jac_params), 1))
    base = None
    for label, model, sens in cases:
        names = None if sens is None else ["y0", "params"]

        def run(model=model, names=names):
            return rotode.integrate(model, (0, 2), y0, method="rk4", dt=0.02, t_eval=[2.0],
                                    sensitivity=names)

        run()
        best = min(timeit.repeat(run, number=3, repeat=5)) / 3
        base = base or best
        print(f"{label:32s} {best * 1e3:8.1f} ms  ({best / base:5.1f}x the plain run)")


if __name__ == "__main__":
    main()
