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
