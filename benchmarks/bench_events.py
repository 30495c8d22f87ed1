"""The cost of events (rotode.events) for every error-controlled method.

Run from the repository root after building:  python benchmarks/bench_events.py [--quick]
Prints, for the three cases of the asv benchmark ``Events`` (asv_bench/benchmarks/steppers.py:
the T-handle's w_y flips with two compiled events, the Lagrange top's 60 degree tilt crossings,
the 60 degree tilt crossings of Rucker's gyro, a kinematic run) and every adaptive method of
the case's kind, the time of ``rotode.integrate(model, (0, 100), y0, method, rtol=1e-10)``
without the events (by its own call path, and by the general one that a call with events
takes), with the compiled events (minimum of repeated runs, one BLAS thread), the overhead
against the general path, the roots located and the accepted steps; then the evaluations of g
per located root, counted with a Python event of the same function (the compiled search takes
the same points). docs/events.md quotes these figures.
"""
import os
import sys
import timeit

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import rotode  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "asv_bench"))
from benchmarks.steppers import Events  # noqa: E402

METHODS = {"t-handle": ["dop853", "dopri5", "rkmk8", "rkmk5"],
           "top": ["dop853", "dopri5", "rkmk8", "rkmk5"],
           "gyro": ["dop853", "dopri5", "rkmk8", "rkmk5", "magnus6", "magnus8"]}


def best(f, number, repeat):
    return min(timeit.repeat(f, number=number, repeat=repeat)) / number


def measure(bench, method, compiled, python, number, repeat):
    """(none, with events) times, roots, steps and evaluations per root of one method."""
    def run(events, **kw):
        return rotode.integrate(bench.model, (0.0, 100.0), bench.y0, method=method,
                                rtol=1e-10, events=events, **bench.options, **kw)

    res = run(compiled)
    none = best(lambda: run(None), number, repeat)
    # (a call without events may take the thin call path, a few us; with events it takes the
    # general path, some 50-90 us more a call: an explicit max_step takes that path without
    # events, the same steps)
    general = best(lambda: run(None, max_step=np.inf), number, repeat)
    with_events = best(lambda: run(compiled), number, repeat)
    calls = [0]

    def counted(t, y):
        calls[0] += 1
        return python(t, y)

    counted.direction = getattr(python, "direction", 0)
    counted_res = run(counted)
    roots = int(np.sum(counted_res.stats["n_events"]))
    # one evaluation at t0 and one per step end; the rest are the root searches
    per_root = (calls[0] - 1 - counted_res.stats["n_steps"]) / max(roots, 1)
    return (none, general, with_events, int(np.sum(res.stats["n_events"])), res.stats["n_steps"],
            per_root)


def main(quick=False):
    number, repeat = (5, 3) if quick else (50, 7)
    print(f"{'case':9s} {'method':8s} {'none us':>8s} {'general':>8s} {'events us':>9s} "
          f"{'overhead':>8s} {'roots':>5s} {'steps':>5s} {'evals/root':>10s}")
    print("(none: the call without events; general: the same on the general call path, which"
          " every call with events takes; overhead: events / general - 1)")
    for case, methods in METHODS.items():
        bench = Events()
        bench.setup(case, "compiled")
        compiled = bench.events
        bench.setup(case, "python")
        python = bench.events
        for method in methods:
            none, general, events, roots, steps, per_root = measure(
                bench, method, compiled, python, number, repeat)
            print(f"{case:9s} {method:8s} {none * 1e6:8.1f} {general * 1e6:8.1f} "
                  f"{events * 1e6:9.1f} {100 * (events / general - 1):7.1f}% {roots:5d} "
                  f"{steps:5d} {per_root:10.2f}")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
