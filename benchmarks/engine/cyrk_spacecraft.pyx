# distutils: language = c++
# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""CyRK's ``cysolve_ivp`` (its C++ core) on the spacecraft of benchmarks/spacecraft.py, with the
right-hand side in Cython: ``rhs_source``'s formulas, in its order (one evaluation equals the
numba one to rounding), as a ``cdef void f(double* dy, double t, double* y, char* args,
PreEvalFunc pre_eval) noexcept nogil`` with the parameter vector packed as doubles in ``args``.
benchmarks/engine/build.py compiles this module at run time (``build.cyrk("cyrk_spacecraft")``).
"""
from libc.math cimport sqrt
from libcpp.vector cimport vector

from CyRK cimport (
    MAX_STEP,
    CySolveOutput,
    DiffeqFuncType,
    Event,
    ODEMethod,
    PreEvalFunc,
    cysolve_ivp,
)

import numpy as np

cdef size_t _nfev = 0           # evaluations of the counting variant


cdef inline void _spacecraft(double* dydt, double t, const double* y,
                             const double* p) noexcept nogil:
    cdef double mu = p[0]
    cdef double rx = y[0], ry = y[1], rz = y[2]
    cdef double vx = y[3], vy = y[4], vz = y[5]
    cdef double q0 = y[6], q1 = y[7], q2 = y[8], q3 = y[9]
    cdef double wx = y[10], wy = y[11], wz = y[12]
    # two-body orbit
    cdef double r2 = rx * rx + ry * ry + rz * rz
    cdef double rn = sqrt(r2)
    cdef double mu_r3 = mu / (r2 * rn)
    dydt[0] = vx
    dydt[1] = vy
    dydt[2] = vz
    dydt[3] = -mu_r3 * rx
    dydt[4] = -mu_r3 * ry
    dydt[5] = -mu_r3 * rz
    # R(q), body to world
    cdef double s = 2.0 / (q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3)
    cdef double R00 = 1.0 - s * (q2 * q2 + q3 * q3)
    cdef double R01 = s * (q1 * q2 - q0 * q3)
    cdef double R02 = s * (q1 * q3 + q0 * q2)
    cdef double R10 = s * (q1 * q2 + q0 * q3)
    cdef double R11 = 1.0 - s * (q1 * q1 + q3 * q3)
    cdef double R12 = s * (q2 * q3 - q0 * q1)
    cdef double R20 = s * (q1 * q3 - q0 * q2)
    cdef double R21 = s * (q2 * q3 + q0 * q1)
    cdef double R22 = 1.0 - s * (q1 * q1 + q2 * q2)
    # gravity gradient
    cdef double bx = R00 * rx + R10 * ry + R20 * rz
    cdef double by = R01 * rx + R11 * ry + R21 * rz
    cdef double bz = R02 * rx + R12 * ry + R22 * rz
    cdef double Ibx = p[1] * bx + p[2] * by + p[3] * bz
    cdef double Iby = p[4] * bx + p[5] * by + p[6] * bz
    cdef double Ibz = p[7] * bx + p[8] * by + p[9] * bz
    cdef double g = p[25] * 3.0 * mu_r3 / r2
    cdef double tx = g * (by * Ibz - bz * Iby)
    cdef double ty = g * (bz * Ibx - bx * Ibz)
    cdef double tz = g * (bx * Iby - by * Ibx)
    # LVLH target
    cdef double hx = ry * vz - rz * vy
    cdef double hy = rz * vx - rx * vz
    cdef double hz = rx * vy - ry * vx
    cdef double hn = sqrt(hx * hx + hy * hy + hz * hz)
    cdef double o3x = -rx / rn, o3y = -ry / rn, o3z = -rz / rn
    cdef double o2x = -hx / hn, o2y = -hy / hn, o2z = -hz / hn
    cdef double o1x = o2y * o3z - o2z * o3y
    cdef double o1y = o2z * o3x - o2x * o3z
    cdef double o1z = o2x * o3y - o2y * o3x
    # e = dq0 dq_v = vex(R_e - R_e^T) / 4
    cdef double ex = 0.25 * ((o3x * R01 + o3y * R11 + o3z * R21)
                             - (o2x * R02 + o2y * R12 + o2z * R22))
    cdef double ey = 0.25 * ((o1x * R02 + o1y * R12 + o1z * R22)
                             - (o3x * R00 + o3y * R10 + o3z * R20))
    cdef double ez = 0.25 * ((o2x * R00 + o2y * R10 + o2z * R20)
                             - (o1x * R01 + o1y * R11 + o1z * R21))
    # rate error w - R^T w_t
    cdef double dwx = wx - (R00 * hx + R10 * hy + R20 * hz) / r2
    cdef double dwy = wy - (R01 * hx + R11 * hy + R21 * hz) / r2
    cdef double dwz = wz - (R02 * hx + R12 * hy + R22 * hz) / r2
    # PD, h' = -tau_c
    cdef double cx = -p[19] * ex - p[22] * dwx
    cdef double cy = -p[20] * ey - p[23] * dwy
    cdef double cz = -p[21] * ez - p[24] * dwz
    dydt[13] = -cx
    dydt[14] = -cy
    dydt[15] = -cz
    # Euler with wheels
    cdef double Hx = p[1] * wx + p[2] * wy + p[3] * wz + y[13]
    cdef double Hy = p[4] * wx + p[5] * wy + p[6] * wz + y[14]
    cdef double Hz = p[7] * wx + p[8] * wy + p[9] * wz + y[15]
    cdef double mx = tx + cx - (wy * Hz - wz * Hy)
    cdef double my = ty + cy - (wz * Hx - wx * Hz)
    cdef double mz = tz + cz - (wx * Hy - wy * Hx)
    dydt[10] = p[10] * mx + p[11] * my + p[12] * mz
    dydt[11] = p[13] * mx + p[14] * my + p[15] * mz
    dydt[12] = p[16] * mx + p[17] * my + p[18] * mz
    # q' = 1/2 q (x) (0, w)
    dydt[6] = 0.5 * (-q1 * wx - q2 * wy - q3 * wz)
    dydt[7] = 0.5 * (q0 * wx + q2 * wz - q3 * wy)
    dydt[8] = 0.5 * (q0 * wy - q1 * wz + q3 * wx)
    dydt[9] = 0.5 * (q0 * wz + q1 * wy - q2 * wx)


cdef void spacecraft(double* dy, double t, double* y, char* args,
                     PreEvalFunc pre_eval) noexcept nogil:
    _spacecraft(dy, t, y, <const double*>args)


cdef void spacecraft_counted(double* dy, double t, double* y, char* args,
                             PreEvalFunc pre_eval) noexcept nogil:
    global _nfev
    _nfev += 1
    _spacecraft(dy, t, y, <const double*>args)


def rhs(const double[::1] params, double t, const double[::1] y):
    """One evaluation: dydt (16,)."""
    out = np.empty(16)
    cdef double[::1] ov = out
    _spacecraft(&ov[0], t, &y[0], &params[0])
    return out


def solve(const double[::1] params, double t0, double t1, const double[::1] y0, double rtol,
          const double[::1] atols, str method="DOP853", bint count=False, double max_step=0.0):
    """One ``cysolve_ivp`` run (method "DOP853" or "RK45", ``atols`` per component, CyRK's
    default largest step unless ``max_step`` > 0); returns (final state, accepted steps,
    evaluations or -1, success)."""
    cdef Py_ssize_t i, n = y0.shape[0]
    cdef vector[double] y0_vec = vector[double](n)
    cdef vector[double] atols_vec = vector[double](n)
    cdef vector[double] rtols_vec = vector[double](1, rtol)
    cdef vector[char] args_vec = vector[char](params.shape[0] * sizeof(double))
    cdef double* a = <double*>args_vec.data()
    global _nfev
    for i in range(n):
        y0_vec[i] = y0[i]
        atols_vec[i] = atols[i]
    for i in range(params.shape[0]):
        a[i] = params[i]
    cdef ODEMethod m
    if method == "DOP853":
        m = ODEMethod.DOP853
    elif method == "RK45":
        m = ODEMethod.RK45
    else:
        raise ValueError(f"unknown method {method!r}")
    cdef DiffeqFuncType f = spacecraft_counted if count else spacecraft
    _nfev = 0
    # positional: Cython passes a C function's defaults only as a contiguous tail
    cdef CySolveOutput result = cysolve_ivp(
        f, t0, t1, y0_vec, m, rtol, atols[0], args_vec, 0, 0, 2000, False, vector[double](),
        NULL, vector[Event](), rtols_vec, atols_vec, max_step if max_step > 0 else MAX_STEP)
    cdef size_t size = result.get().size
    out = np.empty(n)
    cdef double[::1] ov = out
    for i in range(n):
        ov[i] = result.get().solution[(size - 1) * n + i]
    return (out, result.get().steps_taken, <Py_ssize_t>_nfev if count else -1,
            bool(result.get().success))
