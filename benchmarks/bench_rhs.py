"""Speed of rotode's right-hand sides against the same equations in plain NumPy.

Run from the repository root after building:  python benchmarks/bench_rhs.py
Prints the time per call and the ratio NumPy / rotode for
  - one rhs(t, y) call of QuaternionKinematics (Rucker 2018 benchmark w) and RigidBody;
  - solve_ivp DOP853 and LSODA on the Rucker 2018 benchmark (T = 100 s, rtol 1e-10, atol 1e-12),
    end to end, checking that both versions use the same number of evaluations.
The NumPy versions are written the way a careful NumPy user would (no np.cross for 3-vectors,
explicit component arithmetic), so the ratios are not inflated by slow helpers.
"""
import timeit

import numpy as np
from scipy.integrate import solve_ivp

import rotode.omega as omega
from rotode.rhs import QuaternionKinematics, RigidBody
from rotode.studies import SEED004_A as A
from rotode.studies import SEED004_B as B
from rotode.studies import SEED004_PHASE as PHASE
from rotode.studies import T_HANDLE, numpy_quaternion_kinematics, numpy_rigid_body

INERTIA = T_HANDLE


def best(stmt, number, repeat=5):
    return min(timeit.repeat(stmt, number=number, repeat=repeat)) / number


def main():
    bench = omega.Sinusoid(amplitude=A, rate=B, phase=PHASE)
    qk = QuaternionKinematics(bench, frame="body")
    rb = RigidBody(INERTIA)
    q = np.array([0.9, 0.1, -0.3, 0.2])
    y = np.array([0.9, 0.1, -0.3, 0.2, 0.4, -1.0, 2.0])
    assert np.allclose(qk(1.3, q), numpy_quaternion_kinematics(1.3, q), rtol=0, atol=1e-15)
    assert np.allclose(rb(1.3, y), numpy_rigid_body(1.3, y), rtol=0, atol=1e-15)
    print(f"{'case':<44}{'numpy':>12}{'rotode':>12}{'ratio':>8}")
    rows = [
        ("rhs call QuaternionKinematics",
         best(lambda: numpy_quaternion_kinematics(1.3, q), 20000),
         best(lambda: qk(1.3, q), 200000)),
        ("rhs call RigidBody",
         best(lambda: numpy_rigid_body(1.3, y), 20000),
         best(lambda: rb(1.3, y), 200000)),
    ]
    for method in ("DOP853", "LSODA"):
        kw = dict(method=method, rtol=1e-10, atol=1e-12)
        s_np = solve_ivp(numpy_quaternion_kinematics, (0, 100), [1.0, 0, 0, 0], **kw)
        s_cy = solve_ivp(qk, (0, 100), [1.0, 0, 0, 0], **kw)
        same = s_np.nfev == s_cy.nfev
        nfev = f"{s_cy.nfev}" if same else f"{s_cy.nfev} != {s_np.nfev}"
        label = f"solve_ivp {method} Rucker 2018 (nfev {nfev})"
        rows.append((label,
                     best(lambda kw=kw: solve_ivp(numpy_quaternion_kinematics, (0, 100),
                                                  [1.0, 0, 0, 0], **kw), 1, 3),
                     best(lambda kw=kw: solve_ivp(qk, (0, 100), [1.0, 0, 0, 0], **kw), 1, 3)))
    for name, t_np, t_cy in rows:
        unit, s = ("us", 1e6) if t_np < 1e-2 else ("ms", 1e3)
        print(f"{name:<44}{t_np * s:>9.2f} {unit}{t_cy * s:>9.2f} {unit}{t_np / t_cy:>7.1f}x")


if __name__ == "__main__":
    main()
