# A user's equations y' = f(t, y) with quaternion blocks (rotode/ode.pyx): the C signature a
# compiled right-hand side has (a numba cfunc, a scipy.LowLevelCallable from C or Cython), for
# downstream Cython that builds one.
#
#   int f(double t, const double* y, double* dydt, const double* p)
#
# y: the state (n values; each quaternion block scalar first, body to world), dydt: OUT, its
# derivative (n values), p: the body's parameters (`ODE.params`' row; NULL without params).
# Return 0; any other value stops the body's run, reported with its time.
ctypedef int (*ode_fn)(double t, const double* y, double* dydt, const double* p) noexcept nogil


# A user's equations as a Cython class: subclass `Equations` in a cdef class and override
# `evaluate` (the same contract as `ode_fn`: fill dydt, return 0; p: the body's parameters or
# NULL), then pass an instance to rotode.ODE; the runner calls it without the GIL.
cdef class Equations:
    cdef int evaluate(self, double t, const double* y, double* dydt,
                      const double* p) noexcept nogil
