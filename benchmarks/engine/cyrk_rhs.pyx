# distutils: language = c++
# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""CyRK's ``cysolve_ivp`` (its C++ core) with Cython right-hand sides of the three benchmark
problems, as CyRK documents it: a ``cdef void f(double* dy, double t, double* y, char* args,
PreEvalFunc pre_eval) noexcept nogil`` handed to ``cysolve_ivp``, the parameters packed as
doubles in ``args``.  The formulas are benchmarks/engine/models.hpp's (rotode's, one evaluation
bit for bit).  benchmarks/engine/build.py compiles this module at run time.
"""
from libc.math cimport sin
from libcpp.vector cimport vector

from CyRK cimport CySolveOutput, DiffeqFuncType, ODEMethod, PreEvalFunc, cysolve_ivp

import numpy as np

cdef size_t _nfev = 0           # evaluations of the counting variants


cdef inline void _quaternion_rate(const double* q, double w0, double w1, double w2,
                                  double* dq) noexcept nogil:
    dq[0] = 0.5 * (-q[1] * w0 - q[2] * w1 - q[3] * w2)
    dq[1] = 0.5 * (q[0] * w0 + q[2] * w2 - q[3] * w1)
    dq[2] = 0.5 * (q[0] * w1 - q[1] * w2 + q[3] * w0)
    dq[3] = 0.5 * (q[0] * w2 + q[1] * w1 - q[2] * w0)


cdef void top(double* dy, double t, double* y, char* args,
              PreEvalFunc pre_eval) noexcept nogil:
    """Lagrange top; args: I (3), I^-1 (3), m g h."""
    cdef const double* p = <const double*>args
    cdef double q0 = y[0], q1 = y[1], q2 = y[2], q3 = y[3]
    cdef double s = 2.0 / (q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3)
    cdef double d0 = s * (q0 * q2 - q3 * q1)
    cdef double d1 = s * (-(q0 * q1) - q3 * q2)
    cdef double t0 = -(p[6] * d1), t1 = p[6] * d0
    cdef double L0 = p[0] * y[4], L1 = p[1] * y[5], L2 = p[2] * y[6]
    _quaternion_rate(y, y[4], y[5], y[6], dy)
    dy[4] = p[3] * (t0 - (y[5] * L2 - y[6] * L1))
    dy[5] = p[4] * (t1 - (y[6] * L0 - y[4] * L2))
    dy[6] = p[5] * (0.0 - (y[4] * L1 - y[5] * L0))


cdef void free_body(double* dy, double t, double* y, char* args,
                    PreEvalFunc pre_eval) noexcept nogil:
    """Torque-free body; args: I (3), I^-1 (3)."""
    cdef const double* p = <const double*>args
    cdef double L0 = p[0] * y[4], L1 = p[1] * y[5], L2 = p[2] * y[6]
    _quaternion_rate(y, y[4], y[5], y[6], dy)
    dy[4] = p[3] * -(y[5] * L2 - y[6] * L1)
    dy[5] = p[4] * -(y[6] * L0 - y[4] * L2)
    dy[6] = p[5] * -(y[4] * L1 - y[5] * L0)


cdef void kinematics(double* dy, double t, double* y, char* args,
                     PreEvalFunc pre_eval) noexcept nogil:
    """Body rate w_i = amp_i sin(rate t + phase_i); args: amp (3), rate, phase (3)."""
    cdef const double* p = <const double*>args
    _quaternion_rate(y, p[0] * sin(p[3] * t + p[4]), p[1] * sin(p[3] * t + p[5]),
                     p[2] * sin(p[3] * t + p[6]), dy)


cdef void top_counted(double* dy, double t, double* y, char* args,
                      PreEvalFunc pre_eval) noexcept nogil:
    global _nfev
    _nfev += 1
    top(dy, t, y, args, pre_eval)


cdef void free_body_counted(double* dy, double t, double* y, char* args,
                            PreEvalFunc pre_eval) noexcept nogil:
    global _nfev
    _nfev += 1
    free_body(dy, t, y, args, pre_eval)


cdef void kinematics_counted(double* dy, double t, double* y, char* args,
                             PreEvalFunc pre_eval) noexcept nogil:
    global _nfev
    _nfev += 1
    kinematics(dy, t, y, args, pre_eval)


def solve(int model, const double[::1] params, double t0, double t1, const double[::1] y0,
          double rtol, double atol, bint count=False):
    """One ``cysolve_ivp`` run with DOP853 (model 0 top, 1 free body, 2 kinematics, as
    engine.cpp); returns (final state, accepted steps, evaluations or -1, success)."""
    cdef vector[double] y0_vec = vector[double](y0.shape[0])
    cdef vector[char] args_vec = vector[char](params.shape[0] * sizeof(double))
    cdef double* a = <double*>args_vec.data()
    cdef Py_ssize_t i, n = y0.shape[0]
    global _nfev
    for i in range(n):
        y0_vec[i] = y0[i]
    for i in range(params.shape[0]):
        a[i] = params[i]
    cdef DiffeqFuncType f
    if model == 0:
        f = top_counted if count else top
    elif model == 1:
        f = free_body_counted if count else free_body
    elif model == 2:
        f = kinematics_counted if count else kinematics
    else:
        raise ValueError(f"unknown model {model}")
    _nfev = 0
    cdef CySolveOutput result = cysolve_ivp(f, t0, t1, y0_vec, method=ODEMethod.DOP853,
                                            rtol=rtol, atol=atol, args_vec=args_vec)
    cdef size_t size = result.get().size
    out = np.empty(n)
    cdef double[::1] ov = out
    for i in range(n):
        ov[i] = result.get().solution[(size - 1) * n + i]
    return (out, result.get().steps_taken, <Py_ssize_t>_nfev if count else -1,
            bool(result.get().success))
