"""The registry of rotode's methods: every fixed-step method as data.

One `Method` record per method holds its name, family, order, the models it integrates (with
the compiled step kernel that does it), its tableau as exact rationals, its Gauss nodes, its
``scipy.integrate.OdeSolver`` class and its published reference.  `rotode.integrate`, the runners
(`rotode.kinematic`, `rotode.dynamic`, `rotode.implicit`), `rotode.steps`, the solver classes
of `rotode.solvers`, the table of docs/methods.md and the tests all read this registry; nothing
else lists methods.  Adding a method whose kernel exists is one entry here and one line in the
docs (`markdown_table` gives the table that docs/methods.md must contain).

``REGISTRY`` maps each name to its `Method`, in the order of the docs table; ``MODELS`` names
the model kinds a method can integrate, ``("kinematics", "rigid body")``.

>>> from rotode import methods
>>> methods.get("cg3").order, methods.names("kinematics")[:3]
(3, ('lie_euler', 'exp2', 'magnus_ca'))

Kernels (the compiled step each runner selects by name, docs/architecture.md):

=========================== =================================================================
kinematics: ``cg``           product of exponentials ``exp(h b_i w(t0 + c_i h))`` (needs ``b``,
                             ``c``; ``w`` is a known function of time, so ``a`` is not used)
kinematics: ``exp2``         Rucker 2018 eq. 28 (uses ``w`` and ``w'``)
kinematics: ``magnus_ca``    Magnus series for constant angular acceleration ([NIRD])
kinematics: ``magnus``       Gauss-Legendre Magnus method with ``len(nodes)`` nodes (1 to 4)
kinematics: ``rk3``/``rk4``  Runge-Kutta on the non-unit quaternion (Rucker 2018 sec. III)
kinematics: ``ab3``          variable-step Adams-Bashforth 3, RK4 start
rigid body: ``lie_euler``    ``q1 = q0 exp(h w0/2)``, ``w1 = w0 + h w'``
rigid body: ``cg``           Crouch-Grossman with the full tableau ``a``, ``b``, ``c``
rigid body: ``rk3``/``rk4``/``ab3``/``rkn4``   vector-space methods (Rucker 2018, Mandre 2008)
rigid body: ``implicit``     Mizerski 2020 secs. 7-10 (``variant`` names the residual)
both: ``erk``                an embedded pair (``tableau`` + ``embedded``) on the state vector
both: ``rkmk``               the same pair on the rotation vector of each step (Munthe-Kaas;
                             rotode/rkmk.pxd), q = q_n exp(v/2)
=========================== =================================================================
"""
import dataclasses
from fractions import Fraction as _F

from rotode import _pairs

__all__ = ["Method", "Tableau", "Embedded", "MODELS", "REGISTRY", "get", "names",
           "markdown_table"]

#: The model kinds a method can integrate.
MODELS = ("kinematics", "rigid body")


@dataclasses.dataclass(frozen=True)
class Tableau:
    """Butcher tableau as exact rationals.

    Parameters
    ----------
    a : tuple of tuple of Fraction
        Rows of the strictly lower triangle (row ``i`` has ``i`` entries).
    b : tuple of Fraction
        Weights, one per stage.
    c : tuple of Fraction
        Nodes, one per stage.

    Attributes
    ----------
    doubles : tuple
        ``(a, b, c)`` as the float64 values every kernel uses (converted once, correctly
        rounded).

    Raises
    ------
    ValueError
        If the shapes of ``a``, ``b`` and ``c`` do not make an s-stage tableau.

    See Also
    --------
    Method, Embedded

    Examples
    --------
    >>> from rotode import methods
    >>> rk4 = methods.get("rk4").tableau
    >>> rk4.stages, rk4.doubles[1]
    (4, (0.16666666666666666, 0.3333333333333333, 0.3333333333333333, 0.16666666666666666))
    """

    a: tuple
    b: tuple
    c: tuple

    def __post_init__(self):
        s = len(self.b)
        if len(self.c) != s or len(self.a) != s or any(len(r) != i for i, r in enumerate(self.a)):
            raise ValueError("a tableau needs s rows of a (row i with i entries), s b and s c")
        object.__setattr__(self, "doubles", (
            tuple(tuple(float(x) for x in row) for row in self.a),
            tuple(float(x) for x in self.b), tuple(float(x) for x in self.c)))

    @property
    def stages(self):
        """The number of stages ``s``."""
        return len(self.b)


@dataclasses.dataclass(frozen=True)
class Embedded:
    """Error estimate and dense output of an embedded explicit Runge-Kutta pair (exact).

    For the ``magnus`` kernel (``kind`` "magnus") ``e`` and ``dense`` are empty: the estimate is
    the lower-order Magnus method of order ``error_order`` on its own Gauss nodes ``nodes``
    (Iserles, Munthe-Kaas, Norsett and Zanna 2000: the difference of two Magnus
    methods with different quadratures sees the quadrature error of the integral of w as well
    as the commutator terms), and outputs inside a step are Magnus steps from its start.

    ``e`` are the error weights over the stages and the FSAL stage ``f(t + h, y_new)``
    (``h sum e_j K_j`` estimates the local error); DOP853 adds ``e3`` (its order-3 estimate,
    combined with ``e`` as in Hairer's code).  ``dense`` is DOPRI5's ``P`` (stage x power) or
    DOP853's ``D`` rows 3..6 with the extra stages ``extra_a``/``extra_c`` (``kind`` says
    which formula).  ``error_order`` sets the controller's exponent ``-1/(error_order + 1)``.

    Parameters
    ----------
    kind : str
        "dopri5", "dop853" or "magnus": the formulas of the estimate and the dense output.
    error_order : int
        Order of the error estimate.
    e : tuple of Fraction
        Error weights (empty for "magnus").
    dense : tuple
        Dense-output coefficients (empty for "magnus").
    e3 : tuple of Fraction or None, optional
        DOP853's order-3 error weights.
    extra_a, extra_c : tuple, optional
        DOP853's extra stages for its dense output.
    nodes : tuple of float, optional
        Gauss nodes of the lower-order Magnus estimate ("magnus").

    Attributes
    ----------
    doubles : dict
        ``e``, ``e3``, ``dense``, ``extra_a``, ``extra_c`` as float64 values.

    See Also
    --------
    Method, Tableau

    References
    ----------
    .. [1] E. Hairer, S. P. Norsett and G. Wanner, Solving Ordinary Differential Equations I:
       Nonstiff Problems, 2nd ed., Springer, 1993, secs. II.4-II.6.
    .. [2] A. Iserles, H. Z. Munthe-Kaas, S. P. Norsett and A. Zanna, "Lie-group methods",
       Acta Numerica 9, 2000.

    Examples
    --------
    >>> from rotode import methods
    >>> pair = methods.get("rkmk5").embedded
    >>> pair.kind, pair.error_order
    ('dopri5', 4)
    """

    kind: str
    error_order: int
    e: tuple
    dense: tuple
    e3: tuple | None = None
    extra_a: tuple = ()
    extra_c: tuple = ()
    nodes: tuple = ()

    def __post_init__(self):
        def dbl(x):
            return tuple(dbl(v) for v in x) if isinstance(x, tuple) else float(x)

        object.__setattr__(self, "doubles", {
            "e": dbl(self.e), "e3": dbl(self.e3) if self.e3 else None,
            "dense": dbl(self.dense), "extra_a": dbl(self.extra_a),
            "extra_c": dbl(self.extra_c)})


@dataclasses.dataclass(frozen=True)
class Method:
    """One method of the registry.

    Parameters
    ----------
    name : str
        What `rotode.integrate` takes as ``method=``.
    title : str
        One line for docs and docstrings.
    family : str
        "Lie-Euler", "exponential", "Magnus", "Crouch-Grossman", "Runge-Kutta", "Munthe-Kaas",
        "multistep", "Nystrom" or "implicit".
    order : int
        Global order of convergence (the accuracy the tests measure as a slope).
    kernels : dict
        Model kind -> name of the compiled kernel that steps it (module docstring).
    tableau : Tableau or None, optional
        For the ``cg`` and ``erk`` kernels (and, for reference, the RK tableaux).
    embedded : Embedded or None, optional
        Error estimate and dense output: the method takes ``rtol``/``atol``.
    nodes : tuple of float or None, optional
        Gauss-Legendre nodes of the ``magnus`` kernel, as fractions of the step.
    variant : str or None, optional
        The ``implicit`` kernel's residual.
    solver : str or None, optional
        Name of its ``OdeSolver`` class in `rotode.solvers` (None: `rotode.integrate` only).
    reference : str
        The published source (docs/references.md).

    See Also
    --------
    get, names, REGISTRY

    Examples
    --------
    >>> from rotode import methods
    >>> rk4 = methods.get("rk4")
    >>> rk4.family, rk4.order, rk4.adaptive, rk4.kernel("rigid body")
    ('Runge-Kutta', 4, False, 'rk4')
    """

    name: str
    title: str
    family: str
    order: int
    kernels: dict
    reference: str
    tableau: Tableau | None = None
    nodes: tuple | None = None
    variant: str | None = None
    solver: str | None = None
    embedded: Embedded | None = None

    @property
    def adaptive(self):
        """True when the method has an error estimate (takes ``rtol``/``atol``)."""
        return self.embedded is not None

    @property
    def models(self):
        """The model kinds this method integrates."""
        return tuple(m for m in MODELS if m in self.kernels)

    def kernel(self, model):
        """The kernel name for `model` ("kinematics" or "rigid body"); ValueError when the
        method does not integrate it."""
        try:
            return self.kernels[model]
        except KeyError:
            raise ValueError(f"method {self.name!r} does not integrate {model}; it integrates "
                             f"{' and '.join(self.models)}") from None


def _tab(a, b, c):
    return Tableau(tuple(tuple(_F(x) for x in row) for row in a), tuple(_F(x) for x in b),
                   tuple(_F(x) for x in c))


def _dopri5():
    P = _pairs
    return _tab(P.DOPRI5_A, P.DOPRI5_B, P.DOPRI5_C), Embedded(
        "dopri5", 4, tuple(_F(x) for x in P.DOPRI5_E),
        tuple(tuple(_F(x) for x in row) for row in P.DOPRI5_P))


def _dop853():
    P = _pairs
    s, S = P.DOP853_STAGES, P.DOP853_STAGES_DENSE

    def a(i, j):
        return _F(P.DOP853_A.get((i, j), "0"))

    b = tuple(a(s, j) for j in range(s))                  # row 12 is the FSAL row: b
    e3 = tuple(b[j] - _F(P.DOP853_BHAT3.get(j, "0")) if j < s else _F(0) for j in range(s + 1))
    e5 = tuple(_F(P.DOP853_E5.get(j, "0")) for j in range(s + 1))
    d = tuple(tuple(_F(P.DOP853_D.get((r, j), "0")) for j in range(S)) for r in range(4))
    tab = Tableau(tuple(tuple(a(i, j) for j in range(i)) for i in range(s)), b,
                  tuple(_F(c) for c in P.DOP853_C[:s]))
    return tab, Embedded("dop853", 7, e5, d, e3,
                         tuple(tuple(a(i, j) for j in range(i)) for i in range(s + 1, S)),
                         tuple(_F(c) for c in P.DOP853_C[s + 1:S]))


_KIN, _RB = "kinematics", "rigid body"
_CG1 = _tab(((),), (1,), (0,))
_RUCKER = "Rucker 2018, sec. III"
_CG = "Crouch & Grossman 1993; Owren & Marthinsen 1999, Table 1"
_GAUSS = "Iserles & Norsett 1999; Blanes, Casas & Ros 2000"
# Gauss-Legendre nodes on [0, 1] as the kernels have always used them (magnus4: 0.5 - sqrt(3)/6
# in double, one ulp from the correctly rounded root; tests/test_methods.py)
_GL2 = (0.21132486540518713, 0.78867513459481287)
_GL3 = (0.11270166537925831, 0.5, 0.88729833462074169)
_GL4 = (0.069431844202973713, 0.33000947820757187, 0.66999052179242813, 0.93056815579702629)
_RKMK = "Munthe-Kaas 1998, 1999; Hairer, Lubich & Wanner 2006, sec. IV.8.2"

_ENTRIES = (
    Method("lie_euler", "Lie-Euler exponential update", "Lie-Euler", 1,
           {_KIN: "cg", _RB: "lie_euler"}, "Rucker 2018, eq. 24", tableau=_CG1,
           solver="LieEuler"),
    Method("exp2", "Second-order exponential update (rigid body: exponential midpoint)",
           "exponential", 2, {_KIN: "exp2", _RB: "cg"}, "Rucker 2018, eq. 28",
           tableau=_tab(((), ("1/2",)), (0, 1), (0, "1/2")), solver="Exp2"),
    Method("magnus_ca", "Magnus expansion for constant angular acceleration over the step",
           "Magnus", 2, {_KIN: "magnus_ca"}, "[NIRD]", solver="MagnusCA"),
    Method("magnus2", "Midpoint Magnus method", "Magnus", 2, {_KIN: "magnus"}, _GAUSS,
           nodes=(0.5,), solver="Magnus2"),
    Method("magnus4", "Fourth-order Magnus method (two Gauss nodes)", "Magnus", 4,
           {_KIN: "magnus"}, _GAUSS, nodes=_GL2, solver="Magnus4"),
    Method("magnus6", "Sixth-order Magnus method (three Gauss nodes)", "Magnus", 6,
           {_KIN: "magnus"}, _GAUSS,
           nodes=_GL3, solver="Magnus6", embedded=Embedded("magnus", 4, (), (), nodes=_GL2)),
    Method("magnus8", "Eighth-order Magnus method (four Gauss nodes)", "Magnus", 8,
           {_KIN: "magnus"}, _GAUSS,
           nodes=_GL4, solver="Magnus8", embedded=Embedded("magnus", 6, (), (), nodes=_GL3)),
    Method("cg1", "Crouch-Grossman method of order 1", "Crouch-Grossman", 1,
           {_KIN: "cg", _RB: "cg"}, _CG, tableau=_CG1, solver="CG1"),
    Method("cg2", "Crouch-Grossman method of order 2 (Heun's tableau)", "Crouch-Grossman", 2,
           {_KIN: "cg", _RB: "cg"}, _CG, tableau=_tab(((), (1,)), ("1/2", "1/2"), (0, 1)),
           solver="CG2"),
    Method("cg3", "Crouch-Grossman method of order 3", "Crouch-Grossman", 3,
           {_KIN: "cg", _RB: "cg"}, _CG,
           tableau=_tab(((), ("3/4",), ("119/216", "17/108")), ("13/51", "-2/3", "24/17"),
                        (0, "3/4", "17/24")), solver="CG3"),
    Method("rk3", "Kutta's third-order Runge-Kutta on non-unit quaternions", "Runge-Kutta", 3,
           {_KIN: "rk3", _RB: "rk3"}, _RUCKER,
           tableau=_tab(((), ("1/2",), (-1, 2)), ("1/6", "2/3", "1/6"), (0, "1/2", 1)),
           solver="RK3"),
    Method("rk4", "Classical Runge-Kutta on non-unit quaternions", "Runge-Kutta", 4,
           {_KIN: "rk4", _RB: "rk4"}, _RUCKER,
           tableau=_tab(((), ("1/2",), (0, "1/2"), (0, 0, 1)), ("1/6", "1/3", "1/3", "1/6"),
                        (0, "1/2", "1/2", 1)), solver="RK4"),
    Method("dopri5", "Dormand-Prince 5(4) with error control and dense output", "Runge-Kutta",
           5, {_KIN: "erk", _RB: "erk"}, "Dormand & Prince 1980; Hairer, Norsett & Wanner "
           "1993, sec. II.5", tableau=_dopri5()[0], embedded=_dopri5()[1]),
    Method("dop853", "Dormand-Prince 8(5,3) with error control and dense output",
           "Runge-Kutta", 8, {_KIN: "erk", _RB: "erk"}, "Hairer, Norsett & Wanner 1993, "
           "sec. II.10 (DOP853)", tableau=_dop853()[0], embedded=_dop853()[1]),
    Method("rkmk5", "Runge-Kutta-Munthe-Kaas with the Dormand-Prince 5(4) pair", "Munthe-Kaas",
           5, {_KIN: "rkmk", _RB: "rkmk"}, _RKMK, tableau=_dopri5()[0], embedded=_dopri5()[1],
           solver="RKMK5"),
    Method("rkmk8", "Runge-Kutta-Munthe-Kaas with the Dormand-Prince 8(5,3) pair",
           "Munthe-Kaas", 8, {_KIN: "rkmk", _RB: "rkmk"}, _RKMK, tableau=_dop853()[0],
           embedded=_dop853()[1], solver="RKMK8"),
    Method("ab3", "Variable-step Adams-Bashforth 3 on non-unit quaternions", "multistep", 3,
           {_KIN: "ab3", _RB: "ab3"}, _RUCKER),
    Method("rkn4", "Runge-Kutta-Nystrom on the second-order quaternion equation", "Nystrom", 4,
           {_RB: "rkn4"}, "Mandre 2008, secs. 5-6", solver="RKN4"),
    Method("implicit_midpoint", "Implicit midpoint rule for the rigid body", "implicit", 2,
           {_RB: "implicit"}, "Mizerski 2020, secs. 7-10", variant="midpoint",
           solver="ImplicitMidpoint"),
    Method("trapezoid", "World-frame trapezoidal rule for the rigid body", "implicit", 2,
           {_RB: "implicit"}, "Mizerski 2020, secs. 7-10", variant="trapezoid",
           solver="Trapezoid"),
    Method("object_trapezoid", "Body-frame trapezoidal rule for the rigid body", "implicit", 2,
           {_RB: "implicit"}, "Mizerski 2020, secs. 7-10", variant="object_trapezoid",
           solver="ObjectTrapezoid"),
)

#: name -> Method, in the order of the docs table.
REGISTRY = {m.name: m for m in _ENTRIES}


def get(name: str, model: str | None = None) -> Method:
    """The `Method` called `name` (checked to integrate `model` when given).

    Parameters
    ----------
    name : str
        A registry name, e.g. "rk4".
    model : {"kinematics", "rigid body"}, optional
        Check that the method integrates this model kind (default: no check).

    Returns
    -------
    Method

    Raises
    ------
    ValueError
        For an unknown name, listing the known ones (for `model` when given), or a method that
        does not integrate `model`.

    See Also
    --------
    names

    Examples
    --------
    >>> from rotode import methods
    >>> methods.get("cg3").order
    3
    >>> methods.get("implicit_midpoint", "kinematics")
    Traceback (most recent call last):
        ...
    ValueError: method 'implicit_midpoint' does not integrate kinematics; ...
    """
    if model is not None and model not in MODELS:
        raise ValueError(f"`kind` must be one of {MODELS}, got {model!r}")
    try:
        method = REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"`method` must be one of {names(model)}, got {name!r}") from None
    if model is not None:
        method.kernel(model)
    return method


def names(model: str | None = None, kernel: str | None = None,
          family: str | None = None) -> tuple[str, ...]:
    """Names of the registry's methods, filtered.

    Parameters
    ----------
    model : {"kinematics", "rigid body"}, optional
        Only the methods that integrate this model kind.
    kernel : str, optional
        Only those whose kernel for `model` is this one (with `model`).
    family : str, optional
        Only those of this family (`Method.family`).

    Returns
    -------
    tuple of str
        In registry order (within a family: increasing order).

    Raises
    ------
    ValueError
        For an unknown model kind.

    See Also
    --------
    get

    Examples
    --------
    >>> from rotode import methods
    >>> methods.names("rigid body", family="implicit")
    ('implicit_midpoint', 'trapezoid', 'object_trapezoid')
    """
    if model is not None and model not in MODELS:
        raise ValueError(f"`kind` must be one of {MODELS}, got {model!r}")
    return tuple(m.name for m in REGISTRY.values()
                 if (model is None or model in m.kernels)
                 and (kernel is None or m.kernels.get(model) == kernel)
                 and (family is None or m.family == family))


#: The pair kinds the compiled error estimates and dense outputs implement (rotode/erk.pxd).
PAIR_KINDS = ("dopri5", "dop853")


def sizes(method):
    """The sizes a compiled kernel must hold for `method`: ``stages`` (tableau rows, plus the
    FSAL stage and the dense-output stages of a pair), ``nodes`` (Gauss nodes of a Magnus
    method and of its embedded one)."""
    out = {"stages": 0, "nodes": 0}
    if method.tableau is not None:
        out["stages"] = method.tableau.stages
        if method.embedded is not None and method.embedded.kind in PAIR_KINDS:
            out["stages"] += 1 + len(method.embedded.extra_a)
    if method.nodes is not None:
        out["nodes"] = len(method.nodes)
        if method.embedded is not None:
            out["nodes"] = max(out["nodes"], len(method.embedded.nodes))
    return out


def check_sizes(model, limits, entries=None):
    """Raise ValueError for a registry entry that a compiled kernel cannot hold.

    Each compiled runner calls this when it is imported, with the sizes of its C arrays, so a
    registry entry with one stage too many fails at import instead of being copied past the
    end of an array.

    Parameters
    ----------
    model : {"kinematics", "rigid body"}
        The model kind whose kernels `limits` describes.
    limits : dict
        Kernel name -> ``{"stages": n, "nodes": m}``, the most each compiled kernel holds
        (a kernel absent from `limits` is not checked).
    entries : iterable of Method, optional
        The entries to check (default: the whole registry).

    Raises
    ------
    ValueError
        Naming the method, its kernel and the size it exceeds; also for a pair whose
        embedded kind is not one of `PAIR_KINDS` (it would run as another pair).

    See Also
    --------
    sizes
    """
    for m in REGISTRY.values() if entries is None else entries:
        kernel = m.kernels.get(model)
        if kernel not in limits:
            continue
        if (kernel in ("erk", "rkmk") and m.embedded is not None
                and m.embedded.kind not in PAIR_KINDS):
            raise ValueError(f"method {m.name!r}: embedded kind {m.embedded.kind!r} is not one "
                             f"of the compiled pairs {PAIR_KINDS}")
        need = sizes(m)
        for what, most in limits[kernel].items():
            if need[what] > most:
                raise ValueError(f"method {m.name!r} needs {need[what]} {what} in the "
                                 f"{model} kernel {kernel!r}, which holds at most {most}")


def by_solver(class_name):
    """The `Method` whose ``OdeSolver`` class is called `class_name`."""
    for m in REGISTRY.values():
        if m.solver == class_name:
            return m
    raise LookupError(f"no registry method has the solver class {class_name!r}")


def markdown_table() -> str:
    """The table of docs/methods.md, from the registry.

    Returns
    -------
    str
        A Markdown table, one row per method: name, family, order, kernels, error estimate,
        ``solve_ivp`` class and reference.

    See Also
    --------
    names, REGISTRY

    Examples
    --------
    >>> from rotode import methods
    >>> print(methods.markdown_table().splitlines()[2][:60])
    | `lie_euler` | Lie-Euler | 1 | `cg` | `lie_euler` |  | `rot
    """
    rows = ["| method | family | order | kinematics | rigid body | `rtol` (estimate order) | "
            "`solve_ivp` class | reference |", "|---|---|---|---|---|---|---|---|"]
    for m in REGISTRY.values():
        kin = f"`{m.kernels[_KIN]}`" if _KIN in m.kernels else ""
        rb = f"`{m.kernels[_RB]}`" if _RB in m.kernels else ""
        cls = f"`rotode.{m.solver}`" if m.solver else ""
        ctl = f"yes ({m.embedded.error_order})" if m.embedded is not None else ""
        rows.append(f"| `{m.name}` | {m.family} | {m.order} | {kin} | {rb} | {ctl} | {cls} | "
                    f"{m.reference} |")
    return "\n".join(rows) + "\n"


def __dir__():
    """The public names, ``__all__`` (not the imported helpers)."""
    return list(__all__)
