# Embedded explicit Runge-Kutta pairs (layer 2 kernels): one step, its error norm, the initial
# step and the dense output, for a state of any size n and any right-hand side given as a
# `noexcept nogil` callback (`ErkRhs`: the callback with its configuration, body, scratch and
# n, and 4 n doubles of the kernels' own scratch; `ErkTol`: the error scale).  The
# coefficients are the registry's (rotode.methods: any pair of its two kinds, `PairKind`),
# converted once to doubles in an `ERK` struct (by rotode._driver.Engine).  The formulas
# follow Hairer, Norsett & Wanner, "Solving Ordinary Differential Equations I" (2nd ed.,
# 1993): sec. II.4 (error norm, initial step),
# II.5 (DOPRI5), II.6 (dense output), II.10 (DOP853 and its 8(5,3) error estimator), as SciPy's
# `integrate._ivp.rk` implements them, so steps agree with solve_ivp's (RK23, RK45, DOP853).
# Two kinds of pair: ERK_STANDARD (the plain estimate h sum e_j K_j and a dense output
# y + h sum_j K_j sum_p P[j][p] theta^(p+1) of at most ERK_MAX_POWERS powers: DOPRI5, BS3) and
# ERK_DOP853 (Hairer's combined 8(5,3) estimate and a degree-7 dense output with extra stages).
# Allocation-free; the caller owns K (ERK_MAX_STAGES rows of n), F (7 rows of n) and the
# scratch.
from libc.math cimport sqrt, fabs, fmax, fmin, pow, INFINITY

cdef extern from "_erk.hpp" namespace "rotode" nogil:
    # the dense output's sums, each in the order of a plain loop over the stages (same bits),
    # with the state size fixed at compile time for n = 3, 4, 6 and 7 (rotode/_erk.hpp)
    void erk_stage_state(int n, int ncols, const int* cols, const double* a, const double* K,
                         double h, const double* y, double* ys)
    void erk_dense_rows(int n, int ncols, const int* cols, const double* D, int sj, int sm,
                        const double* K, double h, double* out)
    void erk_dop853_eval(int n, double x, const double* y, const double* F, double* out)

cdef enum:
    ERK_MAX_STAGES = 16      # stages of the step, the FSAL stage and the dense-output stages
    # the largest state the driver keeps in its body struct (larger: on the heap, see
    # rotode/_driver_loop.pxi `_buffers`)
    ERK_MAX_N = 8
    ERK_MAX_POWERS = 4       # powers of theta of an ERK_STANDARD dense output (rows of F)
    # the pair kinds: the values of rotode.methods.PairKind (checked by rotode._driver)
    ERK_STANDARD = 0
    ERK_DOP853 = 1

# f(t, y) of one body (OUT: dy[n]); 0 ok, else a status that stops the integration
ctypedef int (*erk_rhs)(const void* cfg, Py_ssize_t i, double t, const double* y, double* dy,
                        void* work) noexcept nogil


cdef struct ErkRhs:
    # the right-hand side of one body as the kernels below call it: f(cfg, i, t, y, dy, work)
    # on a state of n values (the caller's, read-only to the kernels)
    erk_rhs f
    const void* cfg
    Py_ssize_t i
    void* work
    int n
    double* scratch          # 4 n doubles for the kernels below (a stage's argument, ...)


cdef struct ErkTol:
    # the error scale of the step size control: component k of an error is measured against
    # atol[k] + rtol max(|y_k|, |y_new_k|, ref[k]) (`erk_error_norm`)
    double rtol
    const double* atol
    const double* ref


cdef struct ERK:
    int kind                 # ERK_STANDARD or ERK_DOP853 (error norm and dense-output formula)
    int s                    # stages of a step; K[s] is the FSAL stage f(t + h, y_new)
    int s_dense              # DOP853: 16 (stages s+1.. for the dense output); else s + 1
    int npow                 # ERK_STANDARD: powers of theta of the dense output (P's columns)
    double exponent          # step controller: -1 / (error order + 1)
    double a[ERK_MAX_STAGES * ERK_MAX_STAGES]     # a[i * ERK_MAX_STAGES + j], j < i
    double b[ERK_MAX_STAGES]
    double c[ERK_MAX_STAGES]
    double e[ERK_MAX_STAGES]      # error weights over K[0..s]
    double e3[ERK_MAX_STAGES]     # DOP853's order-3 estimate
    # ERK_STANDARD: P[j * ERK_MAX_POWERS + p] (zero beyond npow); DOP853: D[r * 16 + j]
    double dense[ERK_MAX_POWERS * ERK_MAX_STAGES]
    # the stages with a nonzero weight in the dense output (cols[:ncols]) and, for each
    # dense-output stage r > s, those with a nonzero a[r][j] (acols[r * 16 :][:nacols[r]]):
    # the sums skip exact zeros, which leaves every finite result unchanged (a sum that
    # starts at +0.0 is never -0.0, and adding +-0 to it changes nothing)
    int cols[ERK_MAX_STAGES]
    int ncols
    int acols[ERK_MAX_STAGES * ERK_MAX_STAGES]
    int nacols[ERK_MAX_STAGES]


cdef inline int erk_stage(const ERK* T, const ErkRhs* f, double tr, double h, const double* y,
                          double* K, int r) noexcept nogil:
    """Stage r: K_r = f(tr, y + h sum_{j<r} a_rj K_j), tr its time (OUT: K[r])."""
    cdef double* ys = f.scratch
    cdef double acc
    cdef int j, k, n = f.n
    for k in range(n):
        acc = 0.0
        for j in range(r):
            acc = acc + T.a[r * ERK_MAX_STAGES + j] * K[j * n + k]
        ys[k] = y[k] + h * acc
    return f.f(f.cfg, f.i, tr, ys, &K[r * n], f.work)


cdef inline int erk_step(const ERK* T, const ErkRhs* f, double t, double h, double t_end,
                         const double* y, double* K, double* ynew) noexcept nogil:
    """Stages 1..s-1 and y_new = y + h sum b_j K_j, given K[0] = f(t, y); the stages with
    c = 1 are evaluated at t_end, which is t + h except where the step ends on a jump of the
    equations (the driver's stops: a time just inside the step) (OUT: K, ynew)."""
    cdef double acc
    cdef int st, r, j, k, n = f.n
    for r in range(1, T.s):
        st = erk_stage(T, f, t_end if T.c[r] == 1.0 else t + T.c[r] * h, h, y, K, r)
        if st != 0:
            return st
    for k in range(n):
        acc = 0.0
        for j in range(T.s):
            acc = acc + T.b[j] * K[j * n + k]
        ynew[k] = y[k] + h * acc
    return 0


cdef inline double erk_error_norm(const ERK* T, int n, double h, const double* K,
                                  const double* y, const double* ynew,
                                  const ErkTol* tol) noexcept nogil:
    """The scaled RMS norm of the local error estimate (< 1: accept), K[0..s] filled.

    Component k is scaled by atol_k + rtol max(|y_k|, |ynew_k|, ref_k): ref is 0 for a state
    (SciPy's scale) and 1 for the rotation vector of a Runge-Kutta-Munthe-Kaas step, whose
    size says nothing about the orientation's (an error dv is an error |dv|/2 in a unit q).
    A zero scale (atol_k = 0 and the component 0 at both ends) takes a zero estimate as 0
    (the component is exactly 0 and so is its estimated error; SciPy's 0/0 is NaN, which
    rejects every step) and a nonzero one as inf (rejected: nothing is small beside 0)."""
    cdef double scale, e5, e3, n5 = 0.0, n3 = 0.0
    cdef int j, k
    for k in range(n):
        scale = tol.atol[k] + fmax(fmax(fabs(y[k]), fabs(ynew[k])), tol.ref[k]) * tol.rtol
        e5 = 0.0
        e3 = 0.0
        for j in range(T.s + 1):
            e5 = e5 + T.e[j] * K[j * n + k]
            e3 = e3 + T.e3[j] * K[j * n + k]
        if scale == 0.0:
            if e5 == 0.0 and e3 == 0.0:
                continue
            return INFINITY
        e5 = e5 / scale
        e3 = e3 / scale
        n5 = n5 + e5 * e5
        n3 = n3 + e3 * e3
    if T.kind == ERK_STANDARD:
        return fabs(h) * sqrt(n5 / n)
    if n5 == 0.0 and n3 == 0.0:
        return 0.0
    return fabs(h) * n5 / sqrt((n5 + 0.01 * n3) * n)


cdef inline double erk_rms(int n, const double* x, const double* scale) noexcept nogil:
    """The RMS of x / scale over the n components, a zero-scale component counted as 0."""
    cdef double acc = 0.0
    cdef int k
    for k in range(n):
        if scale[k] != 0.0:
            acc = acc + (x[k] / scale[k]) * (x[k] / scale[k])
    return sqrt(acc / n)


cdef inline int erk_initial_step(const ERK* T, const ErkRhs* f, double t0, const double* y0,
                                 const double* f0, double direction, double length,
                                 const ErkTol* tol, double max_step, double* h) noexcept nogil:
    """Hairer, Norsett & Wanner 1993 sec. II.4 (SciPy's select_initial_step), with the
    scale of `erk_error_norm` (OUT: h).  A component with a zero scale (atol_k = 0 where
    y0_k = 0) has no size to measure its change against and is left out of the norms d0, d1,
    d2 (`erk_rms`); SciPy's own 0/0 there gives a NaN step and a loop without end.  Any other
    scale gives SciPy's step to the last bit."""
    cdef int k, st, n = f.n
    cdef double* scale = f.scratch
    cdef double* y1 = &f.scratch[n]
    cdef double* f1 = &f.scratch[2 * n]
    cdef double* diff = &f.scratch[3 * n]
    cdef double d0, d1, d2, h0, h1
    for k in range(n):
        scale[k] = tol.atol[k] + fmax(fabs(y0[k]), tol.ref[k]) * tol.rtol
    d0 = erk_rms(n, y0, scale)
    d1 = erk_rms(n, f0, scale)
    if d0 < 1e-5 or d1 < 1e-5:
        h0 = 1e-6
    else:
        h0 = 0.01 * d0 / d1
    h0 = fmin(h0, length)
    for k in range(n):
        y1[k] = y0[k] + h0 * direction * f0[k]
    st = f.f(f.cfg, f.i, t0 + h0 * direction, y1, f1, f.work)
    if st != 0:
        return st
    for k in range(n):
        diff[k] = f1[k] - f0[k]
    d2 = erk_rms(n, diff, scale) / h0
    if d1 <= 1e-15 and d2 <= 1e-15:
        h1 = fmax(1e-6, h0 * 1e-3)
    else:
        h1 = pow(0.01 / fmax(d1, d2), -T.exponent)
    h[0] = fmin(fmin(100.0 * h0, h1), fmin(length, max_step))
    return 0


cdef inline int erk_dense_prepare(const ERK* T, const ErkRhs* f, double t, double h,
                                  const double* y, const double* ynew, double* K,
                                  double* F) noexcept nogil:
    """Coefficients of the step's interpolant (DOP853: its three extra stages) (OUT: K, F).
    Every sum runs over the stages in order (those with nonzero coefficients, `ERK.acols`,
    `ERK.cols`), the components side by side (rotode/_erk.hpp).  A standard pair's rows
    F[r] = h sum_j P[j][r] K_j, r < ERK_MAX_POWERS (those from npow on are h * 0)."""
    cdef double* ys = f.scratch
    cdef double dy
    cdef int st, r, k, n = f.n
    if T.kind == ERK_STANDARD:
        erk_dense_rows(n, T.ncols, T.cols, T.dense, ERK_MAX_POWERS, 1, K, h, F)
        return 0
    for r in range(T.s + 1, T.s_dense):          # erk_stage over the nonzero a[r][j]
        erk_stage_state(n, T.nacols[r], &T.acols[r * ERK_MAX_STAGES],
                        &T.a[r * ERK_MAX_STAGES], K, h, y, ys)
        st = f.f(f.cfg, f.i, t + T.c[r] * h, ys, &K[r * n], f.work)
        if st != 0:
            return st
    for k in range(n):
        dy = ynew[k] - y[k]
        F[k] = dy
        F[n + k] = h * K[k] - dy
        F[2 * n + k] = 2.0 * dy - h * (K[T.s * n + k] + K[k])
    erk_dense_rows(n, T.ncols, T.cols, T.dense, 1, ERK_MAX_STAGES, K, h, &F[3 * n])
    return 0


cdef inline void erk_dense(const ERK* T, int n, double x, const double* y, const double* F,
                           double* out) noexcept nogil:
    """The interpolant at t + x h, 0 <= x <= 1 (OUT: out[n])."""
    cdef double acc, p
    cdef int r, k
    if T.kind == ERK_STANDARD:
        for k in range(n):
            acc = 0.0
            p = 1.0
            for r in range(T.npow):
                p = p * x
                acc = acc + F[r * n + k] * p
            out[k] = y[k] + acc
        return
    erk_dop853_eval(n, x, y, F, out)
