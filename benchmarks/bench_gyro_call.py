"""The cost of one call on gyroscope data: ``integrate(Samples, span, q0, dt="samples")`` on
packets of 1, 10 and 2000 samples at 100 Hz (a filter that propagates its attitude on each
packet of an IMU, and a whole recording), on the thin path (one body, nothing else asked:
`rotode._plan.thin_fixed`, docs/architecture.md "The thin call path") and the same call on the
general path (``workers=None`` takes it), for exp2, magnus4 and rk4.

Run from the clone's root after building rotode (``python setup.py build_ext --inplace``):

    python benchmarks/bench_gyro_call.py [--quick] [--sensitivity]

One process; the two paths alternate in batches, and each time is the minimum over the
batches (microseconds per call).  The steps are the same on both paths (the same bits,
tests/test_thin_samples.py): the difference is the general path's set-up.

With ``--sensitivity``: exp2 on the same packets (the samples carrying a bias) without a
sensitivity, with ``sensitivity=["bias"]`` and with ``["y0", "bias"]`` (docs/sensitivity.md,
"Cost"), the multiplicative EKF's propagation step on each packet.
"""
import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

import rotode  # noqa: E402

METHODS = ("exp2", "magnus4", "rk4")
PACKETS = (1, 10, 2000)


def packet(n, rate=100.0, bias=0.0):
    """A `Samples` rate of n + 1 gyroscope samples at `rate` Hz (a zero-order hold, as a
    gyroscope reports the mean rate over the interval it starts) with a `bias`, and its
    span."""
    t = np.arange(n + 1) / rate
    w = np.c_[np.sin(t), 0.5 * np.cos(t), 0.2 + 0.1 * t]
    return rotode.omega.Samples(t, w, kind="previous", bias=bias), (0.0, float(t[-1]))


def measure(src, span, method, turns, batch):
    """Minimum time per call (s) on the thin and the general path, alternated."""
    best = {"thin": np.inf, "general": np.inf}
    q0 = np.array([1.0, 0.0, 0.0, 0.0])
    for _ in range(turns):
        for path, workers in (("thin", 1), ("general", None)):
            for _ in range(batch):
                start = time.perf_counter()
                rotode.integrate(src, span, q0, method=method, dt="samples", workers=workers)
                best[path] = min(best[path], time.perf_counter() - start)
    return best


def sensitivities(turns):
    """exp2 on each packet without a sensitivity, with the bias's and with y0's and the
    bias's: minimum microseconds per call."""
    print("exp2 on gyroscope data with its sensitivities (us per call, minimum of alternated runs)")
    asks = (None, ["bias"], ["y0", "bias"])
    print(f"{'samples':>8} {'plain':>9} {'bias':>9} {'y0, bias':>9}")
    for n in PACKETS:
        src, span = packet(n, bias=[0.01, 0.0, -0.01])
        best = [np.inf] * len(asks)
        for _ in range(turns):
            for j, ask in enumerate(asks):
                for _ in range(20 if n < 1000 else 5):
                    start = time.perf_counter()
                    rotode.integrate(src, span, [1.0, 0.0, 0.0, 0.0], method="exp2",
                                     dt="samples", sensitivity=ask)
                    best[j] = min(best[j], time.perf_counter() - start)
        print(f"{n:8d} " + " ".join(f"{b * 1e6:9.1f}" for b in best))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 turns instead of 5")
    parser.add_argument("--sensitivity", action="store_true",
                        help="exp2 with the bias's and y0's sensitivities instead")
    args = parser.parse_args()
    turns = 2 if args.quick else 5
    if args.sensitivity:
        sensitivities(turns)
        return
    print("one call on gyroscope data, dt='samples' (us per call, minimum of alternated runs)")
    print(f"{'samples':>8} {'method':>8} {'thin':>9} {'general':>9} {'ratio':>6}")
    for n in PACKETS:
        src, span = packet(n)
        for method in METHODS:
            best = measure(src, span, method, turns, 40 if n < 1000 else 10)
            print(f"{n:8d} {method:>8} {best['thin'] * 1e6:9.1f} {best['general'] * 1e6:9.1f} "
                  f"{best['general'] / best['thin']:5.1f}x")


if __name__ == "__main__":
    main()
