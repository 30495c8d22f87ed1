"""How much a better explicit pair could buy on the upright Lagrange top: right-hand-side
evaluations to reach the same final-time error as DOP853, for Verner's "most efficient" 9(8)
pair and for Dormand-Prince 5(4).

Run from the clone's root after building rotode (``python setup.py build_ext --inplace``):

    python benchmarks/bench_pair_efficiency.py

Issue 27 asks rotode's fastest adaptive setting to be 1.5x faster than CyRK's ``cysolve_ivp``
at rtol 1e-5, 1e-7, 1e-9 and 1e-11.  rotode's ``dop853`` runs within 2-17 % of a hand-written
C++ DOP853 with the right-hand side inlined (``benchmarks/bench_engine.py``), and
``cysolve_ivp`` runs DOP853 at that speed too, so a 1.5x margin needs a method that reaches
the same accuracy with 1.5x less work.  This script measures the work such a method saves, in
evaluations of the right-hand side (a step's cost is its stages' evaluations and sums; a pair
with more stages also sums more, so the ratio is an upper bound on its speed-up).

The problem is bench_engine.py's: the upright Lagrange top (I = diag(1, 1, 0.5), m g h = 1,
w0 = (1.5, 0, 1)), T = 100 s, atol = rtol / 100, rotode's equations (``RigidBody.__call__``);
every pair runs in SciPy's ``solve_ivp`` with SciPy's controller, so the comparison is of the
pairs alone.  The error is the final orientation's angle from a reference (Verner 9(8) at
rtol 1e-13, atol 1e-15; DOP853 there agrees to 1e-12).  For each DOP853 run, the other pair's
evaluations at the same error come from its own runs (log-log interpolation in error).

Coefficients: Verner, J. H. (2010), "Numerically optimal Runge-Kutta pairs with interpolants",
Numerical Algorithms 53, 383-396, the 16-stage 9(8) pair, as double-precision values (its
weights ``b`` and the error weights ``b - bhat``); DOP853 and RK45 are SciPy's.  No dense
output is needed here (the runs keep their final state only).

Measured on 2026-12-07 (AVX-512 EPYC, 2 cores; the counts do not depend on the machine):
Verner 9(8) needs 1.11x fewer evaluations than DOP853 at rtol 1e-5's error, 1.06x at 1e-7's,
1.26x at 1e-9's and 1.60x at 1e-11's; DOPRI5 needs more at every one (0.92x, 0.68x, 0.47x,
0.29x).  So no pair of this family meets 1.5x at the three looser tolerances.
"""
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))                  # the clone's rotode (built in place) first

import numpy as np  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402
from scipy.integrate._ivp.rk import RungeKutta  # noqa: E402

import rotode  # noqa: E402

T = 100.0
TABLE_RTOLS = (1e-5, 1e-7, 1e-9, 1e-11)
LADDER = 10.0 ** -np.arange(4.0, 12.51, 0.5)

# Verner 2010, 9(8): the nonzero a_ij by row (stages 2..16), nodes, weights and error weights
_VERNER9_A = (
    (0.03462,),
    (-0.03893354388572875, 0.13595789452450918),
    (0.03638413148954267, 0, 0.10915239446862801),
    (2.0257639143939694, 0, -7.638023836496291, 6.173259922102322),
    (0.05112275589406061, 0, 0, 0.17708237945550218, 0.0008027762409222536),
    (0.13160063579752163, 0, 0, -0.2957276252669636, 0.08781378035642955,
     0.6213052975225274),
    (0.07166666666666667, 0, 0, 0, 0, 0.33055335789153195, 0.2427799754418014),
    (0.071806640625, 0, 0, 0, 0, 0.3294380283228177, 0.1165190029271823, -0.034013671875),
    (0.04836757646340646, 0, 0, 0, 0, 0.03928989925676164, 0.10547409458903446,
     -0.021438652846483126, -0.10412291746271944),
    (-0.026645614872014785, 0, 0, 0, 0, 0.03333333333333333, -0.1631072244872467,
     0.03396081684127761, 0.1572319413814626, 0.21522674780318796),
    (0.03689009248708622, 0, 0, 0, 0, -0.1465181576725543, 0.2242577768172024,
     0.02294405717066073, -0.0035850052905728597, 0.08669223316444385, 0.43838406519683376),
    (-0.4866012215113341, 0, 0, 0, 0, -6.304602650282853, -0.2812456182894729,
     -2.679019236219849, 0.5188156639241577, 1.3653531876033418, 5.8850910885039465,
     2.8028087862720628),
    (0.4185367457753472, 0, 0, 0, 0, 6.724547581906459, -0.42544428016461133,
     3.3432791530012653, 0.6170816631175374, -0.9299661239399329, -6.099948804751011,
     -3.002206187889399, 0.2553202529443446),
    (-0.7793740861228848, 0, 0, 0, 0, -13.937342538107776, 1.2520488533793563,
     -14.691500408016868, -0.494705058533141, 2.2429749091462368, 13.367893803828643,
     14.396650486650687, -0.79758133317768, 0.4409353709534278),
    (2.0580513374668867, 0, 0, 0, 0, 22.357937727968032, 0.9094981099755646,
     35.89110098240264, -3.442515027624454, -4.865481358036369, -18.909803813543427,
     -34.26354448030452, 1.2647565216956427, 0, 0),
)
_VERNER9_C = (0, 0.03462, 0.09702435063878045, 0.14553652595817068, 0.561,
              0.22900791159048503, 0.544992088409515, 0.645, 0.48375, 0.06757, 0.25,
              0.6590650618730999, 0.8206, 0.9012, 1.0, 1.0)
_VERNER9_B = (0.014611976858423152, 0, 0, 0, 0, 0, 0, -0.3915211862331339,
              0.23109325002895065, 0.12747667699928525, 0.2246434176204158,
              0.5684352689748513, 0.058258715572158275, 0.13643174034822156,
              0.030570139830827976, 0)
_VERNER9_E = (-0.005357988290444578, 0, 0, 0, 0, 0, 0, -2.583020491182464,
              0.14252253154686625, 0.013420653512688676, -0.02867296291409493,
              2.624999655215792, -0.2825509643291537, 0.13643174034822156,
              0.030570139830827976, -0.04834231373823958)


def _verner9_a():
    a = np.zeros((16, 16))
    for i, row in enumerate(_VERNER9_A):
        a[i + 1, :len(row)] = row
    return a


class Verner98(RungeKutta):
    """Verner's 16-stage 9(8) pair in SciPy's RungeKutta (not FSAL: SciPy's extra evaluation
    at the step's end is the next step's first stage; no dense output)."""

    order = 9
    error_estimator_order = 8
    n_stages = 16
    C = np.array(_VERNER9_C)
    A = _verner9_a()
    B = np.array(_VERNER9_B)
    E = np.array(_VERNER9_E + (0.0,))
    P = np.zeros((17, 1))


def check_tableau():
    """Row sums equal the nodes, the weights sum to 1, the error weights to 0."""
    a = Verner98.A
    assert np.max(np.abs(a.sum(axis=1) - Verner98.C)) < 1e-13
    assert abs(Verner98.B.sum() - 1.0) < 1e-14
    assert abs(Verner98.E.sum()) < 1e-13


def top_problem():
    gravity = rotode.torque.Gravity(1.0, 1.0, [0.0, 0.0, 1.0])
    top = rotode.RigidBody([1.0, 1.0, 0.5], torque=gravity)
    y0 = np.array([1.0, 0.0, 0.0, 0.0, 1.5, 0.0, 1.0])
    return (lambda t, y: top(t, y)), y0


def angle_error(y, ref):
    """The angle (rad) between the orientations of two (non-unit) quaternions."""
    q, r = y[:4] / np.linalg.norm(y[:4]), ref[:4] / np.linalg.norm(ref[:4])
    return 4.0 * np.arcsin(min(1.0, np.linalg.norm(q - np.sign(q @ r) * r) / 2.0))


def work_precision(f, y0, method, ref):
    """(evaluations, final-time error) over the rtol ladder."""
    rows = []
    for rtol in LADDER:
        r = solve_ivp(f, (0.0, T), y0, method=method, rtol=rtol, atol=rtol / 100)
        rows.append((r.nfev, angle_error(r.y[:, -1], ref)))
    return np.array(rows, dtype=float)


def evaluations_at(rows, error):
    """A pair's evaluations at ``error``, interpolated in log-log between its runs."""
    order = np.argsort(np.log(rows[:, 1]))
    return float(np.exp(np.interp(np.log(error), np.log(rows[order, 1]),
                                  np.log(rows[order, 0]))))


def main():
    check_tableau()
    f, y0 = top_problem()
    ref = solve_ivp(f, (0.0, T), y0, method=Verner98, rtol=1e-13, atol=1e-15).y[:, -1]
    check = solve_ivp(f, (0.0, T), y0, method="DOP853", rtol=1e-13, atol=1e-15).y[:, -1]
    print(f"reference: Verner 9(8) at rtol 1e-13; DOP853 there differs by "
          f"{angle_error(check, ref):.1e} rad")
    dop = work_precision(f, y0, "DOP853", ref)
    others = {"Verner 9(8)": work_precision(f, y0, Verner98, ref),
              "DOPRI5": work_precision(f, y0, "RK45", ref)}
    print("\nupright Lagrange top, T = 100 s, atol = rtol/100: evaluations to reach DOP853's "
          "final-time error (DOP853's evaluations / the pair's)")
    print("| rtol | DOP853 evaluations | error (rad) | "
          + " | ".join(others) + " |")
    print("|---|---|---|" + "---|" * len(others))
    for rtol, (n, err) in zip(LADDER, dop, strict=True):
        mark = "**" if any(np.isclose(rtol, r, rtol=1e-9, atol=0.0) for r in TABLE_RTOLS) else ""
        cells = []
        for rows in others.values():
            m = evaluations_at(rows, err)
            inside = rows[:, 1].min() <= err <= rows[:, 1].max()
            cells.append(f"{m:.0f} ({n / m:.2f}x)" if inside else "outside its runs")
        print(f"| {mark}{rtol:.1e}{mark} | {n:.0f} | {err:.2e} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
