# The driver's pairs (included by rotode/_driver.pyx): `Engine` converts a registry method's
# embedded pair to an `ERK` struct (rotode/erk.pxd) once per method, holds an adaptive run's
# step size control (`Control`), and attaches both to a runner's `Stepper`.


# the pairs of the registry already converted to an ERK struct, by method name, and the
# error-scale floors (read-only arrays) by (n, ref)
_PAIRS = {}
_REFS = {}


cdef class Engine:
    """A registry method's embedded pair for the driver, with its step-size control.

    Parameters
    ----------
    spec : rotode.methods.Method
        A method with a pair kernel, ``erk`` or ``rkmk`` (tableau and `Embedded` data of either
        `rotode.methods.PairKind`), a plain tableau (fixed steps: no `Embedded`), or one with
        its own trial step (no tableau).
    control : tuple or None
        ``(rtol, atol, first_step, max_step, max_steps)`` as checked by
        `rotode._validation.as_control` (``atol`` an array of ``n`` values), or None for fixed
        steps on the grid.
    n : int
        State size (the atol values and the RMS norm).
    ref : array_like, optional
        ``n`` floors of the error scale's ``|z|`` (default 0: SciPy's scale); 1 for the
        rotation-vector components of a Runge-Kutta-Munthe-Kaas state.
    """

    def __init__(self, spec, control, int n, ref=None):
        cdef ERK* T = &self.erk
        cdef int r, j
        self._set_control(control, n, ref)
        if spec.tableau is None:          # a method with its own trial step (attach_control)
            return
        done = _PAIRS.get(spec.name)
        if done is not None and (<Engine>done)._spec is spec:
            self.erk = (<Engine>done).erk          # the registry's pair, converted once
            return
        self._spec = spec
        a, b, c = spec.tableau.doubles
        if spec.embedded is None:         # a plain tableau: fixed steps only (no estimate)
            if self.adaptive:
                raise ValueError(f"method {spec.name!r} has no error estimate")
            emb = {"extra_a": (), "extra_c": (), "e": (), "e3": None, "dense": ()}
            standard = True
            powers, order = 0, 0
        else:
            emb = spec.embedded.doubles
            standard = spec.embedded.kind == _methods.PairKind.STANDARD
            powers, order = spec.embedded.powers, spec.embedded.error_order
        # (the entry was checked against these sizes when it was made: rotode.methods)
        s = len(b)
        extra = emb["extra_a"]
        if s + 1 + len(extra) > ERK_MAX_STAGES or powers > ERK_MAX_POWERS:
            raise ValueError(f"method {spec.name!r} exceeds the compiled pair's sizes")
        for r in range(ERK_MAX_STAGES * ERK_MAX_STAGES):
            T.a[r] = 0.0
        for r in range(ERK_MAX_STAGES):
            T.b[r] = 0.0
            T.c[r] = 0.0
            T.e[r] = 0.0
            T.e3[r] = 0.0
        for r in range(ERK_MAX_POWERS * ERK_MAX_STAGES):
            T.dense[r] = 0.0
        T.kind = ERK_STANDARD if standard else ERK_DOP853
        T.s = s
        T.s_dense = s + 1 + len(extra)
        T.npow = powers
        T.exponent = -1.0 / (order + 1)
        for r in range(s):
            T.b[r] = b[r]
            T.c[r] = c[r]
            for j in range(r):
                T.a[r * ERK_MAX_STAGES + j] = a[r][j]
        T.c[s] = 1.0
        for r in range(len(extra)):
            T.c[s + 1 + r] = emb["extra_c"][r]
            for j in range(len(extra[r])):
                T.a[(s + 1 + r) * ERK_MAX_STAGES + j] = extra[r][j]
        for j in range(len(emb["e"])):
            T.e[j] = emb["e"][j]
        if emb["e3"] is not None:
            for j in range(len(emb["e3"])):
                T.e3[j] = emb["e3"][j]
        dense = emb["dense"]
        for r in range(len(dense)):
            for j in range(len(dense[r])):
                if standard:
                    T.dense[r * ERK_MAX_POWERS + j] = dense[r][j]   # P[stage][power]
                else:
                    T.dense[r * ERK_MAX_STAGES + j] = dense[r][j]   # D[row][stage]
        T.ncols = 0                    # the stages that the dense output's sums read
        for j in range(s + 1 if standard else T.s_dense):
            for r in range(ERK_MAX_POWERS):
                if (T.dense[j * ERK_MAX_POWERS + r] if standard else
                        T.dense[r * ERK_MAX_STAGES + j]) != 0.0:
                    T.cols[T.ncols] = j
                    T.ncols += 1
                    break
        for r in range(ERK_MAX_STAGES):
            T.nacols[r] = 0
            for j in range(r):
                if T.a[r * ERK_MAX_STAGES + j] != 0.0:
                    T.acols[r * ERK_MAX_STAGES + T.nacols[r]] = j
                    T.nacols[r] += 1
        _PAIRS[spec.name] = self

    cdef _set_control(self, object control, int n, object ref):
        self.adaptive = control is not None
        cdef const double[::1] av
        if self.adaptive:
            rtol, atol, first_step, max_step, max_steps = control[:5]
            self.control.t_eval = len(control) > 5 and bool(control[5])
            if not (isinstance(atol, np.ndarray) and atol.shape == (n,)
                    and atol.dtype == np.float64 and atol.flags.c_contiguous):
                atol = np.ascontiguousarray(np.broadcast_to(atol, (n,)), dtype=np.float64)
            self._atol = atol
            av = self._atol
            self.control.rtol = rtol
            self.control.atol = &av[0]
            key = (n, ref if ref is None or isinstance(ref, float) else tuple(ref))
            self._ref = _REFS.get(key)
            if self._ref is None:
                self._ref = np.ascontiguousarray(np.broadcast_to(0.0 if ref is None else ref,
                                                                 (n,)), dtype=np.float64)
                self._ref.flags.writeable = False
                _REFS[key] = self._ref
            av = self._ref
            self.control.ref = &av[0]
            self.control.first_step = first_step
            self.control.max_step = max_step
            self.control.max_steps = max_steps

    cdef void attach(self, Stepper* s, erk_rhs deriv) noexcept:
        s.erk = &self.erk
        s.deriv = deriv
        s.control = &self.control if self.adaptive else NULL

    cdef void attach_control(self, Stepper* s) noexcept:
        s.control = &self.control if self.adaptive else NULL
