"""Measure every speed figure that README.md and the documentation quote; write docs/performance.md.

Run from the clone's root after ``python -m pip install ".[bench,plot]"`` (CyRK, numba,
matplotlib; MuJoCo too, when installed), about a minute on 2 cores:

    python benchmarks/docs_numbers.py [--only ode]

(``--only ode`` measures section 5 alone and replaces it on the page.)  It runs, in one
process and in this order:

1. ``benchmarks/bench_adaptive.py``: the work-precision of every error-controlled rotode method
   against CyRK's compiled DOP853 and SciPy's ``solve_ivp`` on three cases, and the figure
   ``docs/figures/work-precision-adaptive.png``;
2. ``rotode.solve_ivp`` against ``scipy.integrate.solve_ivp`` on the same call;
3. section 3 of ``python -m rotode demo``: ``so3.exp`` on a million rotation vectors and single
   rotations per call, each beside SciPy's ``Rotation``;
4. ``benchmarks/bench_dynamic.py`` and ``benchmarks/bench_implicit.py``: the cost per step of the
   fixed-step rigid-body methods, beside a hand-written C loop and MuJoCo (when installed);
5. a user's own equations (``rotode.ODE``): ``benchmarks/bench_ode.py --quick`` (the 16-state
   spacecraft against CyRK's ``cysolve_ivp``/``nbsolve_ivp`` and SciPy), ``bench_ode_rigid.py
   --quick`` (the rigid body as an ODE against the built-in model) and ``bench_ode_batch.py``
   (10^4 spacecraft on 1 and 2 threads).

The page it writes quotes these outputs verbatim, with the date, the machine and its load, so
that every figure in the documentation has one measured source. ``tests/test_docs.py`` checks
that each speed ratio the README states appears on that page. Timings on a shared machine are
noisy: the documents quote ratios (rotode against a peer measured in the same minute).
"""
import contextlib
import io
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
import scipy  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402

import rotode  # noqa: E402
from rotode.studies import numpy_quaternion_kinematics, seed004_omega  # noqa: E402

PAGE = ROOT / "docs" / "performance.md"
FIGURE = "docs/figures/work-precision-adaptive.png"


def machine():
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = [f"Python {platform.python_version()}", f"NumPy {np.__version__}",
                f"SciPy {scipy.__version__}"]
    try:
        import CyRK
        import numba

        versions += [f"CyRK {CyRK.__version__}", f"numba {numba.__version__}"]
    except ImportError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()}; " + ", ".join(versions)


def load():
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def captured(function, *args, **kwargs):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        function(*args, **kwargs)
    return buf.getvalue().rstrip()


def best(run, repeat):
    t = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        t = min(t, time.perf_counter() - start)
    return t


def solve_ivp_comparison():
    """rotode.solve_ivp (compiled loop) against scipy.integrate.solve_ivp (NumPy right-hand
    side), DOP853 on the Rucker (2018) benchmark, T = 100 s, rtol 1e-10, atol 1e-12."""
    model = rotode.QuaternionKinematics(seed004_omega(), frame="body")
    kw = dict(method="DOP853", rtol=1e-10, atol=1e-12)
    print("rotode.solve_ivp (a rotode model, compiled loop) against scipy.integrate.solve_ivp "
          "(a NumPy\nright-hand side), DOP853 on the Rucker (2018) benchmark, T = 100 s, "
          "rtol 1e-10, atol 1e-12;\nbest of 7 (rotode) and 3 (SciPy) calls")
    print(f"  {'call':<34}{'rotode [ms]':>12}{'SciPy [ms]':>12}{'nfev (both)':>13}"
          f"{'SciPy / rotode':>16}")
    for label, extra in (("solve_ivp(...)", {}),
                         ("solve_ivp(..., dense_output=True)", {"dense_output": True})):
        mine = rotode.solve_ivp(model, (0, 100), [1.0, 0, 0, 0], **kw, **extra)
        theirs = solve_ivp(numpy_quaternion_kinematics, (0, 100), [1.0, 0, 0, 0], **kw, **extra)
        t_mine = best(lambda extra=extra: rotode.solve_ivp(model, (0, 100), [1.0, 0, 0, 0],
                                                           **kw, **extra), 7)
        t_theirs = best(lambda extra=extra: solve_ivp(
            numpy_quaternion_kinematics, (0, 100), [1.0, 0, 0, 0], **kw, **extra), 3)
        nfev = f"{mine.nfev}/{theirs.nfev}"
        print(f"  {label:<34}{t_mine * 1e3:>12.3f}{t_theirs * 1e3:>12.2f}{nfev:>13}"
              f"{t_theirs / t_mine:>15.0f}x")


ODE_HEADING = "## Your own equations (`rotode.ODE`)"


def ode_section():
    """The outputs of the three benchmarks of a user's equations (section 5)."""
    import bench_ode
    import bench_ode_batch
    import bench_ode_rigid

    return "\n\n".join(captured(run) for run in (
        lambda: bench_ode.main(quick=True), lambda: bench_ode_rigid.main(quick=True),
        lambda: bench_ode_batch.main(n=10_000, workers=2, repeat=3)))


def update_ode_section():
    """``--only ode``: measure section 5 again and replace its text block on the page (each
    benchmark prints its own date, machine and load), the other sections kept."""
    page = PAGE.read_text()
    start = page.index("```text\n", page.index(ODE_HEADING)) + len("```text\n")
    end = page.index("\n```", start)
    PAGE.write_text(page[:start] + ode_section().replace(str(ROOT) + os.sep, "") + page[end:])
    print(f"wrote section 5 of {PAGE.relative_to(ROOT)}", file=sys.stderr)


def main():
    import bench_adaptive
    import bench_dynamic
    import bench_implicit

    from rotode.studies import demo

    started = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load_before = load()
    print("1/5 bench_adaptive (about 20 s on 2 cores) ...", file=sys.stderr)
    adaptive = captured(bench_adaptive.main, plot_path=str(ROOT / FIGURE))
    print("2/5 rotode.solve_ivp against SciPy ...", file=sys.stderr)
    ivp = captured(solve_ivp_comparison)
    print("3/5 the demo's exponential-map section ...", file=sys.stderr)
    exp = captured(demo.exp_case)
    print("4/5 bench_dynamic and bench_implicit ...", file=sys.stderr)
    dynamic = captured(bench_dynamic.main)
    sys.argv = sys.argv[:1]                   # bench_implicit reads --quick from the command line
    implicit = captured(bench_implicit.main)
    print("5/5 a user's equations: bench_ode, bench_ode_rigid, bench_ode_batch ...",
          file=sys.stderr)
    ode = ode_section()
    load_after = load()
    adaptive = adaptive.replace(str(ROOT) + os.sep, "")
    page = f"""# Performance: measured figures

Every speed figure in the README and on these pages comes from this page, which
`python benchmarks/docs_numbers.py` writes (do not edit it by hand: run the script again).

- Measured: {started}, on {machine()}.
- Load average before and after (the machine is shared, so absolute times are noisy; the
  ratios compare tools measured in the same minute): {load_before} / {load_after}.
- Install: `python -m pip install ".[bench,plot]"` (CyRK and numba are the `bench` extra).

## Error-controlled methods against CyRK and SciPy

`python benchmarks/bench_adaptive.py --plot {FIGURE}` (part of the script): final-time
orientation error against wall time on three cases at T = 100 s, each tool at its fastest
setting (tolerance or step) that reaches each target. CyRK is CyRK's compiled DOP853 with a
numba right-hand side, SciPy is `scipy.integrate.solve_ivp(method="DOP853")` with a NumPy
right-hand side; `x` is CyRK's time divided by rotode's.

```text
{adaptive}
```

![work-precision of the error-controlled methods](figures/work-precision-adaptive.png)

## `rotode.solve_ivp` against SciPy

```text
{ivp}
```

## The exponential map and single rotations

Section 3 of `python -m rotode demo` (which prints the same tables on your machine):

```text
{exp}
```

## Fixed-step rigid-body methods, per step

`python benchmarks/bench_dynamic.py`: one Lagrange top stepped by each method (the time of the
compiled loop alone), a hand-written C loop of the same RK4 for this one body (diagonal
inertia and the gravity torque inlined), and batches of bodies:

```text
{dynamic}
```

`python benchmarks/bench_implicit.py`: the implicit methods on the T-handle at a game frame
rate, beside MuJoCo's integrators when MuJoCo is installed:

```text
{implicit}
```

{ODE_HEADING}

`python benchmarks/bench_ode.py --quick`: the 16-state spacecraft (orbit, attitude, rates,
reaction wheels; benchmarks/spacecraft.py) written once, as a numba `cfunc` for rotode, a numba
`njit` function for CyRK's `nbsolve_ivp`, Cython for CyRK's C++ `cysolve_ivp`, and plain Python
for SciPy and rotode's Python path; each tool's fastest setting reaching each final-attitude
error. `python benchmarks/bench_ode_rigid.py --quick`: the built-in rigid body against the same
equations as a user's `rotode.ODE`, every method. `python benchmarks/bench_ode_batch.py`: 10^4
spacecraft with per-body parameters on 1 and 2 threads.

```text
{ode}
```
"""
    PAGE.write_text(page)
    print(f"wrote {PAGE.relative_to(ROOT)} and {FIGURE}", file=sys.stderr)


if __name__ == "__main__":
    if sys.argv[1:] == ["--only", "ode"]:
        update_ode_section()
    else:
        main()
