"""Command line: ``python -m rotode demo`` (also installed as the ``rotode`` command)."""
import argparse
import sys
import time

import numpy as np


def _table(rows, header):
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = "  ".join(f"{{:<{w}}}" for w in widths)
    print(line.format(*header))
    print(line.format(*["-" * w for w in widths]))
    for r in rows:
        print(line.format(*r))


def demo_constant_rate():
    """Constant-rate rotation: repeated exact exponential updates vs the closed form."""
    from rotode import quaternion, so3

    w = np.array([0.3, -1.1, 2.0])  # rad/s, body frame
    rows = []
    for steps in (10, 1_000, 10_000):
        t_end = 100.0
        dq = quaternion.exp(0.5 * w * (t_end / steps))  # exact update over one step
        q = np.array([1.0, 0.0, 0.0, 0.0])
        t0 = time.perf_counter()
        for _ in range(steps):
            q = quaternion.multiply(q, dq)
        elapsed = time.perf_counter() - t0
        exact = so3.exp(w * t_end)
        err = so3.log(quaternion.to_matrix(q).T @ exact)
        rows.append([steps, f"{np.degrees(np.linalg.norm(err)):.2e}",
                     f"{abs(np.linalg.norm(q) - 1):.1e}", f"{elapsed * 1e3:.1f}"])
    print("\nConstant angular velocity w = [0.3, -1.1, 2.0] rad/s for 100 s: products of exact")
    print("quaternion exponential updates exp(w dt/2) against the closed form R = exp(100 [w]x)")
    _table(rows, ["steps", "angle error [deg]", "| |q| - 1 |", "time [ms]"])


def demo_exp_log():
    """exp/log round trip and agreement with SciPy over the whole range of angles."""
    from scipy.spatial.transform import Rotation

    from rotode import so3

    rng = np.random.default_rng(0)
    axes = rng.normal(size=(200_000, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    rows = []
    for lo, hi in [(0, 1e-6), (1e-6, 1.0), (1.0, 3.0), (3.0, np.pi - 1e-6)]:
        v = axes * rng.uniform(lo, hi, (len(axes), 1))
        back = so3.log(so3.exp(v))
        rel = np.linalg.norm(back - v, axis=1) / np.linalg.norm(v, axis=1)
        dev = np.abs(so3.exp(v) - Rotation.from_rotvec(v).as_matrix()).max()
        rows.append([f"[{lo:.0e}, {hi:.4g}]", f"{rel.max():.1e}", f"{dev:.1e}"])
    print("\nRotation vectors -> matrices -> rotation vectors (200 000 random axes per row)")
    _table(rows, ["angle range [rad]", "max rel. round-trip error", "max |R - scipy|"])


def demo_speed():
    """Vectorised so3.exp against SciPy on one million rotation vectors."""
    from scipy.spatial.transform import Rotation

    from rotode import so3

    v = np.random.default_rng(1).normal(size=(1_000_000, 3))
    best = {"rotode": np.inf, "scipy": np.inf}
    for _ in range(5):
        t0 = time.perf_counter()
        so3.exp(v)
        best["rotode"] = min(best["rotode"], time.perf_counter() - t0)
        t0 = time.perf_counter()
        Rotation.from_rotvec(v).as_matrix()
        best["scipy"] = min(best["scipy"], time.perf_counter() - t0)
    print("\n1e6 rotation vectors to matrices (best of 5)")
    _table([["rotode.so3.exp", f"{best['rotode'] * 1e3:.1f}", "1.0"],
            ["scipy Rotation.from_rotvec().as_matrix()", f"{best['scipy'] * 1e3:.1f}",
             f"{best['scipy'] / best['rotode']:.1f}x slower"]],
           ["method", "time [ms]", "ratio"])


def demo():
    print("rotode demo: exact rotation kernels on real cases")
    demo_constant_rate()
    demo_exp_log()
    demo_speed()


def main(argv=None):
    parser = argparse.ArgumentParser(prog="rotode", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="integrate real cases and print accuracy and timing tables")
    from rotode.studies import STUDIES, run_study

    study = sub.add_parser("study", help="reproduce one of the seeds' studies (CSV + figures)")
    study.add_argument("name", choices=sorted(STUDIES) + ["all"])
    study.add_argument("--out", default=None,
                       help="output directory (default: docs/figures)")
    study.add_argument("--quick", action="store_true", help="reduced sizes (smoke run)")
    study.add_argument("--no-plot", action="store_true", help="CSV only")
    args = parser.parse_args(argv)
    if args.command == "demo":
        demo()
    elif args.command == "study":
        names = sorted(STUDIES) if args.name == "all" else [args.name]
        for name in names:
            run_study(name, out_dir=args.out, quick=args.quick, plot=not args.no_plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
