"""The registry of rotode's methods: every method as data, and the kernels that step them.

One `Method` record per method holds its name, family, order, the models it integrates (with
the compiled step kernel that does it), its tableau as exact rationals, its Gauss nodes, its
``scipy.integrate.OdeSolver`` class and its published reference.  One `Kernel` record per
compiled kernel and model kind holds what the runners used to test by name: whether it is a
Lie-group kernel (|q| kept by construction, `Kernel.group`), the runner that steps it, the
options it takes, the most stages and nodes its C arrays hold, and its code in the one kernel
enum (``Kernel`` of rotode/_driver.pxd, which every runner switches on).  `rotode.integrate`,
the runners (`rotode.kinematic`, `rotode.dynamic`, `rotode.implicit`), `rotode.steps`, the
solver classes of `rotode.solvers`, `rotode.solve_ivp`, the table of docs/methods.md and the
tests all read this registry; no runner lists methods or kernels (the public names of
`rotode.steps` and of the solver classes are each checked against an entry).  Adding a method
whose kernel exists is one entry here (an embedded pair: its coefficients in rotode/_pairs.py
and one entry per kernel; `register` adds one at run time) and one line in the docs
(`markdown_table` gives the table that docs/methods.md must contain).  An entry is checked when
it is made: a tableau with more stages than its kernel holds raises ValueError then (at import
for the entries below).

``REGISTRY`` maps each name to its `Method`, in the order of the docs table; ``MODELS`` names
the model kinds a method can integrate, ``("kinematics", "rigid body", "ode")`` (``"ode"``: a
user's equations, `rotode.ODE`); ``KERNELS`` maps
``(model, kernel name)`` to its `Kernel`; ``KERNEL_NAMES`` lists the kernel names in the order
of their enum codes, ``VARIANTS`` the implicit kernel's residuals in the order of theirs.

>>> from rotode import methods
>>> methods.get("cg3").order, methods.names("kinematics")[:3]
(3, ('lie_euler', 'exp2', 'magnus_ca'))
>>> methods.get("rkmk5").group, methods.get("dopri5").group
(True, False)

Kernels (docs/architecture.md):

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
import enum
import inspect
from fractions import Fraction as _F

from rotode import _pairs

__all__ = ["Method", "Tableau", "Embedded", "Kernel", "PairKind", "MODELS", "KERNEL_NAMES",
           "KERNELS", "VARIANTS", "REGISTRY", "get", "names", "register", "unregister",
           "markdown_table"]

#: The model kinds a method can integrate.
MODELS = ("kinematics", "rigid body", "ode")

#: The compiled kernels, in the order of their codes: ``KERNEL_NAMES[c]`` is the kernel whose
#: member of the enum ``Kernel`` in rotode/_driver.pxd (``KERNEL_`` + its name in capitals)
#: has the value ``c`` (`check_kernel_enum`, run when rotode._driver is imported).
KERNEL_NAMES = ("cg", "exp2", "magnus_ca", "magnus", "rk3", "rk4", "ab3", "erk", "rkmk",
                "lie_euler", "rkn4", "implicit")

#: The residuals of the ``implicit`` kernel, in the order of their codes (``IMP_*`` of
#: rotode/implicit.pxd).
VARIANTS = ("midpoint", "trapezoid", "object_trapezoid")


class PairKind(enum.Enum):
    """The formulas of an embedded pair's error estimate and dense output (`Embedded.kind`).

    ``STANDARD`` and ``DOP853`` are the values of ``ERK_STANDARD`` and ``ERK_DOP853`` in
    rotode/erk.pxd (checked when rotode._driver is imported):

    - ``STANDARD``: the local error ``h sum_j e_j K_j`` (over the stages and the FSAL stage)
      in SciPy's RMS norm, and the dense output ``y + h sum_j K_j sum_p P[j][p] theta^(p+1)``
      of a ``P`` matrix (stages x powers, at most `MAX_POWERS` powers): DOPRI5's, and BS3's
      cubic Hermite interpolant;
    - ``DOP853``: Hairer's combined 8(5,3) estimate and the degree-7 dense output with three
      extra stages (Hairer, Norsett & Wanner 1993, sec. II.10);
    - ``MAGNUS``: the ``magnus`` kernel's own estimate, a lower-order Magnus method on its own
      Gauss nodes (no compiled pair).

    Parameters
    ----------
    value : int or str
        The code, or the member's name in any case ("standard", "dop853", "magnus").

    Attributes
    ----------
    STANDARD : PairKind
        The plain estimate and a ``P``-matrix dense output (0).
    DOP853 : PairKind
        Hairer's 8(5,3) estimate and dense output (1).
    MAGNUS : PairKind
        The embedded Magnus method of the ``magnus`` kernel (2).

    See Also
    --------
    Embedded

    Examples
    --------
    >>> from rotode.methods import PairKind
    >>> PairKind("standard"), PairKind.DOP853.value
    (<PairKind.STANDARD: 0>, 1)
    """

    STANDARD = 0
    DOP853 = 1
    MAGNUS = 2

    # (what the docs show for the call PairKind(value), not EnumType.__call__'s signature)
    __signature__ = inspect.Signature([inspect.Parameter(
        "value", inspect.Parameter.POSITIONAL_OR_KEYWORD)])

    @classmethod
    def _missing_(cls, value):
        if isinstance(value, str) and value.upper() in cls.__members__:
            return cls[value.upper()]
        return None


#: The most powers of theta in a ``STANDARD`` pair's dense output (the columns of its ``P``;
#: the rows of the ERK struct's ``dense`` and of the driver's ``F``, rotode/erk.pxd).
MAX_POWERS = 4
#: The most stages an embedded pair holds (its stages, the FSAL stage and the dense-output
#: stages): ``ERK_MAX_STAGES`` of rotode/erk.pxd (the runners check it when imported).
ERK_STAGES = 16
_TORQUE = ("restore_momentum", "torque_substeps", "torque_points", "torque_resets",
           "torque_start")


@dataclasses.dataclass(frozen=True)
class Kernel:
    """A compiled step kernel for one model kind.

    Parameters
    ----------
    name : str
        Its name (one of `KERNEL_NAMES`; the registry's ``Method.kernels`` values).
    model : {"kinematics", "rigid body", "ode"}
        The model kind it steps.
    runner : {"kinematic", "dynamic", "implicit", "ode"}
        The module (``rotode.<runner>``) whose ``run`` steps it.
    group : bool
        A Lie-group kernel: q is advanced by exponentials (or the exponential of a rotation
        vector), so |q| is kept by construction; the vector-space kernels take ``norm_gain`` or
        ``normalize`` instead.
    options : tuple of str, optional
        The method options it takes (the runners refuse the others with TypeError), besides
        the error-control ones of the adaptive methods (default: none).
    limits : dict, optional
        The most ``stages`` (tableau rows, plus the FSAL and dense-output stages of a pair)
        and Gauss ``nodes`` its C arrays hold, and for a pair the most ``powers`` of a
        ``STANDARD`` dense output; an entry that needs more raises ValueError when it is made
        (default: none, the kernel takes no tableau or nodes).
    pair : bool, optional
        The driver steps an embedded pair (`Embedded`) with it (rotode/erk.pxd; default
        False).
    sensitivity : bool, optional
        ``rotode.integrate(..., sensitivity=...)`` differentiates its discrete map with
        respect to ``y0`` (docs/sensitivity.md; default False).
    parameters : tuple of str, optional
        The model parameters besides ``y0`` it differentiates (``"inertia"`` and the
        torque's ``"torque"``, ``"mass"``, ``"g"``, ``"com"`` of a rigid body; ``"omega"``,
        ``"bias"``, ``"scale"``, ``"amplitude"``, ``"rate"``, ``"phase"`` of a kinematics
        rate; ``"params"`` of a user's equations; default: none).

    See Also
    --------
    Method, KERNELS

    Examples
    --------
    >>> from rotode import methods
    >>> k = methods.KERNELS["rigid body", "cg"]
    >>> k.group, k.max_stages, k.runner
    (True, 3, 'dynamic')
    """

    name: str
    model: str
    runner: str
    group: bool
    options: tuple = ()
    limits: dict = dataclasses.field(default_factory=dict)
    pair: bool = False
    sensitivity: bool = False
    parameters: tuple = ()

    @property
    def code(self):
        """The kernel's value in the enum ``Kernel`` of rotode/_driver.pxd."""
        return KERNEL_NAMES.index(self.name)

    @property
    def max_stages(self):
        """The most stages its C arrays hold (None: no tableau)."""
        return self.limits.get("stages")


def _kernels():
    # sensitivity (every method of a user's ODE: rotode/_ode_sensitivity.py replays its steps):
    # every kinematics kernel (a known rate: the step commutes with a rotation of
    # q, docs/sensitivity.md), the rate's parameters through the products of exponentials of
    # rotode/_tangent.pyx `kinematics_rates`; the rigid-body kernels rotode/_tangent.pyx (and,
    # for the pairs on the state under error control, rotode/_tangent.hpp) steps on duals (ab3
    # with its history of f; rkn4 on [q, q']; the implicit rules by the implicit function
    # theorem)
    kin = {"runner": "kinematic", "model": "kinematics", "sensitivity": True}
    rates = dict(kin, parameters=("omega", "bias", "scale", "amplitude", "rate", "phase"))
    rb = {"runner": "dynamic", "model": "rigid body"}
    # the inertia and the built-in torques' parameters (Constant, Gravity, GravityGradient)
    rigid = ("inertia", "torque", "mass", "g", "com", "mean_motion", "argument_of_latitude",
             "inclination", "raan")
    rbs = dict(rb, sensitivity=True, parameters=rigid)
    ode = {"runner": "ode", "model": "ode"}
    odes = dict(ode, sensitivity=True, parameters=("params",))
    vector = ("norm_gain", "normalize")
    pair = {"stages": ERK_STAGES, "powers": MAX_POWERS}
    out = (
        Kernel("cg", group=True, options=("frame", "exp"), limits={"stages": 4}, **rates),
        Kernel("exp2", group=True, options=("frame", "exp"), **rates),
        Kernel("magnus_ca", group=True, options=("frame", "exp", "terms", "substep", "alpha"),
               **kin),
        Kernel("magnus", group=True, options=("frame", "exp"), limits={"nodes": 4}, **kin),
        Kernel("rk3", group=False, options=("frame",) + vector, **kin),
        Kernel("rk4", group=False, options=("frame",) + vector, **kin),
        Kernel("ab3", group=False, options=("frame",) + vector, **kin),
        Kernel("erk", group=False, options=("frame", "norm_gain"), limits=pair, pair=True,
               **kin),
        Kernel("rkmk", group=True, options=("frame",), limits=pair, pair=True, **kin),
        Kernel("lie_euler", group=True, options=_TORQUE, **rbs),
        Kernel("cg", group=True, options=_TORQUE, limits={"stages": 3}, **rbs),
        Kernel("rk3", group=False, options=("normalize",) + _TORQUE, **rbs),
        Kernel("rk4", group=False, options=("normalize",) + _TORQUE, **rbs),
        Kernel("ab3", group=False, options=("normalize",) + _TORQUE, **rbs),
        Kernel("rkn4", group=False,
               options=("normalize",) + _TORQUE + ("force", "mass", "qdot0"), **rbs),
        Kernel("erk", group=False, limits=pair, pair=True, **rbs),
        Kernel("rkmk", group=True, limits=pair, pair=True, **rbs),
        # a user's equations (rotode.ODE): the generic methods, which need nothing but f and
        # the layout of the quaternion blocks (rotode/ode.pyx)
        Kernel("rk3", group=False, options=("normalize",), limits={"stages": ERK_STAGES},
               **odes),
        Kernel("rk4", group=False, options=("normalize",), limits={"stages": ERK_STAGES},
               **odes),
        Kernel("ab3", group=False, options=("normalize",), **odes),
        Kernel("erk", group=False, options=("normalize",), limits=pair, pair=True, **odes),
        Kernel("rkmk", group=True, limits=pair, pair=True, **odes),
        # the implicit rules: the implicit function theorem on each sub-step's root
        # (rotode/_tangent.pyx `_implicit_sweep`)
        Kernel("implicit", runner="implicit", model="rigid body", group=True,
               options=("solver", "tol", "bound", "max_iter", "max_substeps", "substep_angle",
                        "L0"), sensitivity=True,
               parameters=rigid),
    )
    return {(k.model, k.name): k for k in out}


#: (model, kernel name) -> `Kernel`.
KERNELS = _kernels()


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

    For the ``magnus`` kernel (``kind`` ``MAGNUS``) ``e`` and ``dense`` are empty: the estimate
    is the lower-order Magnus method of order ``error_order`` on its own Gauss nodes ``nodes``
    (Iserles, Munthe-Kaas, Norsett and Zanna 2000: the difference of two Magnus
    methods with different quadratures sees the quadrature error of the integral of w as well
    as the commutator terms), and outputs inside a step are Magnus steps from its start.

    ``e`` are the error weights over the stages and the FSAL stage ``f(t + h, y_new)``
    (``h sum e_j K_j`` estimates the local error); DOP853 adds ``e3`` (its order-3 estimate,
    combined with ``e`` as in Hairer's code).  ``dense`` is a ``STANDARD`` pair's ``P`` (stage x
    power, one row per stage and the FSAL stage, at most `MAX_POWERS` powers: DOPRI5's 4, BS3's
    3) or DOP853's ``D`` rows 3..6 with the extra stages ``extra_a``/``extra_c`` (``kind`` says
    which formula, `PairKind`).  ``error_order`` sets the controller's exponent
    ``-1/(error_order + 1)``.

    Parameters
    ----------
    kind : PairKind or str
        `PairKind` (or its name, any case: "standard", "dop853", "magnus"): the formulas of the
        estimate and the dense output.
    error_order : int
        Order of the error estimate.
    e : tuple of Fraction
        Error weights (empty for ``MAGNUS``).
    dense : tuple
        Dense-output coefficients (empty for ``MAGNUS``).
    e3 : tuple of Fraction or None, optional
        DOP853's order-3 error weights.
    extra_a, extra_c : tuple, optional
        DOP853's extra stages for its dense output.
    nodes : tuple of float, optional
        Gauss nodes of the lower-order Magnus estimate (``MAGNUS``).

    Attributes
    ----------
    doubles : dict
        ``e``, ``e3``, ``dense``, ``extra_a``, ``extra_c`` as float64 values.

    Raises
    ------
    ValueError
        For a kind that is not a `PairKind`.

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
    >>> pair.kind, pair.error_order, pair.powers
    (<PairKind.STANDARD: 0>, 4, 4)
    """

    kind: PairKind
    error_order: int
    e: tuple
    dense: tuple
    e3: tuple | None = None
    extra_a: tuple = ()
    extra_c: tuple = ()
    nodes: tuple = ()

    def __post_init__(self):
        try:
            kind = PairKind(self.kind)
        except ValueError:
            raise ValueError(f"embedded kind {self.kind!r} is not one of the pair kinds "
                             f"{tuple(k.name.lower() for k in PairKind)}") from None
        object.__setattr__(self, "kind", kind)

        def dbl(x):
            return tuple(dbl(v) for v in x) if isinstance(x, tuple) else float(x)

        object.__setattr__(self, "doubles", {
            "e": dbl(self.e), "e3": dbl(self.e3) if self.e3 else None,
            "dense": dbl(self.dense), "extra_a": dbl(self.extra_a),
            "extra_c": dbl(self.extra_c)})

    @property
    def powers(self):
        """The powers of theta of a ``STANDARD`` dense output (0 for the other kinds)."""
        if self.kind != PairKind.STANDARD or not self.dense:
            return 0
        return max(len(row) for row in self.dense)


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
        Model kind -> name of the compiled kernel that steps it (`KERNELS`).
    reference : str
        The published source (docs/references.md).
    tableau : Tableau or None, optional
        For the ``cg``, ``erk`` and ``rkmk`` kernels (and, for reference, the RK tableaux).
    nodes : tuple of float or None, optional
        Gauss-Legendre nodes of the ``magnus`` kernel, as fractions of the step.
    variant : str or None, optional
        The ``implicit`` kernel's residual (one of `VARIANTS`).
    solver : str or None, optional
        Name of its ``OdeSolver`` class in `rotode.solvers` (None: `rotode.integrate` only).
    embedded : Embedded or None, optional
        Error estimate and dense output: the method takes ``rtol``/``atol``.
    scipy : str or None, optional
        The ``scipy.integrate.solve_ivp`` method whose steps it takes: `rotode.solve_ivp` runs
        that name in compiled code for rotode's models (``rotode.ivp.COMPILED_METHODS``).
    step : bool, optional
        `rotode.steps` has a single-step function of its name.
    defaults : dict, optional
        Defaults of its options that differ between methods of one kernel (the implicit
        methods' ``substep_angle``).

    Raises
    ------
    ValueError
        When the entry is made, for an unknown model or kernel, data its kernel cannot step
        (a ``cg`` method without a tableau, a pair whose kind no compiled pair implements, an
        unknown residual variant, ...), kernels that disagree on `group`, or more stages or
        nodes than its kernel's C arrays hold (`Kernel.limits`).

    See Also
    --------
    get, names, register, REGISTRY

    Examples
    --------
    >>> from rotode import methods
    >>> rk4 = methods.get("rk4")
    >>> rk4.family, rk4.order, rk4.adaptive, rk4.group, rk4.kernel("rigid body")
    ('Runge-Kutta', 4, False, False, 'rk4')
    >>> rk4.options("kinematics")
    ('frame', 'norm_gain', 'normalize')
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
    scipy: str | None = None
    step: bool = False
    defaults: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        _check_entry(self)

    @property
    def adaptive(self):
        """True when the method has an error estimate (takes ``rtol``/``atol``)."""
        return self.embedded is not None

    @property
    def models(self):
        """The model kinds this method integrates."""
        return tuple(m for m in MODELS if m in self.kernels)

    @property
    def group(self):
        """True for a Lie-group method (|q| kept by construction, `Kernel.group`)."""
        return all(KERNELS[m, k].group for m, k in self.kernels.items())

    @property
    def pair_kind(self):
        """The `PairKind` of its embedded pair (None: fixed steps)."""
        return None if self.embedded is None else self.embedded.kind

    def kernel(self, model):
        """The kernel name for `model` ("kinematics" or "rigid body"); ValueError when the
        method does not integrate it."""
        try:
            return self.kernels[model]
        except KeyError:
            raise ValueError(f"method {self.name!r} does not integrate {model}; it integrates "
                             f"{' and '.join(self.models)}") from None

    def kernel_info(self, model):
        """The `Kernel` record that steps `model` (ValueError as `kernel`)."""
        return KERNELS[model, self.kernel(model)]

    def code(self, model):
        """The kernel's code in the enum ``Kernel`` of rotode/_driver.pxd (what a runner
        switches on)."""
        return self.kernel_info(model).code

    def runner(self, model):
        """The module name (in `rotode`) whose ``run`` steps `model`."""
        return self.kernel_info(model).runner

    def options(self, model):
        """The method options it takes for `model` (`Kernel.options`)."""
        return self.kernel_info(model).options

    def sensitivity(self, model, parameter="y0"):
        """True when `rotode.integrate` differentiates its run of `model` with respect to
        `parameter` (``sensitivity=``, `Kernel.sensitivity` and `Kernel.parameters`)."""
        if model not in self.kernels:
            return False
        k = self.kernel_info(model)
        return k.sensitivity and (parameter == "y0" or parameter in k.parameters)


def _check_entry(m):
    """Raise ValueError for an entry that no compiled kernel can step (`Method`)."""
    if not m.kernels:
        raise ValueError(f"method {m.name!r} names no kernel")
    for model, kernel in m.kernels.items():
        if model not in MODELS:
            raise ValueError(f"method {m.name!r}: unknown model kind {model!r} (one of "
                             f"{MODELS})")
        if (model, kernel) not in KERNELS:
            raise ValueError(f"method {m.name!r}: no {model} kernel {kernel!r} (one of "
                             f"{tuple(k for md, k in KERNELS if md == model)})")
    kinds = {KERNELS[md, k].group for md, k in m.kernels.items()}
    if len(kinds) > 1:
        raise ValueError(f"method {m.name!r}: its kernels {m.kernels} are not all Lie-group "
                         "kernels or all vector-space kernels")
    names = set(m.kernels.values())
    pair = any(KERNELS[md, k].pair for md, k in m.kernels.items())
    emb = m.embedded
    if pair and (m.tableau is None or emb is None):
        raise ValueError(f"method {m.name!r}: an embedded-pair kernel needs `tableau` and "
                         "`embedded`")
    if pair and emb.kind not in (PairKind.STANDARD, PairKind.DOP853):
        raise ValueError(f"method {m.name!r}: embedded kind {emb.kind.name.lower()!r} is not "
                         f"one of the compiled pairs ('standard', 'dop853')")
    if emb is not None and not pair and not (names == {"magnus"}
                                             and emb.kind == PairKind.MAGNUS):
        raise ValueError(f"method {m.name!r}: kernels {m.kernels} have no error estimate "
                         f"for an embedded pair of kind {emb.kind.name.lower()!r}")
    if "cg" in names and m.tableau is None:
        raise ValueError(f"method {m.name!r}: the 'cg' kernel needs a `tableau`")
    if "magnus" in names:
        if not m.nodes:
            raise ValueError(f"method {m.name!r}: the 'magnus' kernel needs Gauss `nodes`")
        if emb is not None and not (len(m.nodes) in (3, 4)
                                    and len(emb.nodes) == len(m.nodes) - 1):
            raise ValueError(f"method {m.name!r}: the adaptive 'magnus' kernel pairs 3 or 4 "
                             "nodes with an estimate on one node fewer")
    if "implicit" in names and m.variant not in VARIANTS:
        raise ValueError(f"method {m.name!r}: `variant` must be one of {VARIANTS}, got "
                         f"{m.variant!r}")
    if pair:
        s = m.tableau.stages
        if len(emb.e) != s + 1:
            raise ValueError(f"method {m.name!r}: `e` needs {s + 1} weights (the {s} stages "
                             "and the FSAL stage)")
        if emb.kind == PairKind.STANDARD and len(emb.dense) != s + 1:
            raise ValueError(f"method {m.name!r}: the dense output's `P` needs {s + 1} rows "
                             "(the stages and the FSAL stage)")
        if emb.kind == PairKind.DOP853 and (emb.e3 is None or len(emb.dense) != 4):
            raise ValueError(f"method {m.name!r}: a 'dop853' pair needs `e3` and 4 rows of "
                             "`dense`")
    need = sizes(m)
    for model, kernel in m.kernels.items():
        for what, most in KERNELS[model, kernel].limits.items():
            if need[what] > most:
                raise ValueError(f"method {m.name!r} needs {need[what]} {what} in the "
                                 f"{model} kernel {kernel!r}, which holds at most {most}")


def sizes(method):
    """The sizes a compiled kernel must hold for `method`: ``stages`` (tableau rows, plus the
    FSAL stage and the dense-output stages of a pair), ``nodes`` (Gauss nodes of a Magnus
    method and of its embedded one), ``powers`` (of a ``STANDARD`` pair's dense output)."""
    out = {"stages": 0, "nodes": 0, "powers": 0}
    emb = method.embedded
    if method.tableau is not None:
        out["stages"] = method.tableau.stages
        if emb is not None and emb.kind in (PairKind.STANDARD, PairKind.DOP853):
            out["stages"] += 1 + len(emb.extra_a)
            out["powers"] = emb.powers
    if method.nodes is not None:
        out["nodes"] = len(method.nodes)
        if emb is not None:
            out["nodes"] = max(out["nodes"], len(emb.nodes))
    return out


def _tab(a, b, c):
    return Tableau(tuple(tuple(_F(x) for x in row) for row in a), tuple(_F(x) for x in b),
                   tuple(_F(x) for x in c))


def _dopri5():
    P = _pairs
    return _tab(P.DOPRI5_A, P.DOPRI5_B, P.DOPRI5_C), Embedded(
        PairKind.STANDARD, 4, tuple(_F(x) for x in P.DOPRI5_E),
        tuple(tuple(_F(x) for x in row) for row in P.DOPRI5_P))


def _bs3():
    P = _pairs
    return _tab(P.BS3_A, P.BS3_B, P.BS3_C), Embedded(
        PairKind.STANDARD, 2, tuple(_F(x) for x in P.BS3_E),
        tuple(tuple(_F(x) for x in row) for row in P.BS3_P))


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
    return tab, Embedded(PairKind.DOP853, 7, e5, d, e3,
                         tuple(tuple(a(i, j) for j in range(i)) for i in range(s + 1, S)),
                         tuple(_F(c) for c in P.DOP853_C[s + 1:S]))


_KIN, _RB, _ODE = "kinematics", "rigid body", "ode"
# the generic methods, which every model kind runs (a user's ODE too)
_ERK3 = {_KIN: "erk", _RB: "erk", _ODE: "erk"}
_RKMK3 = {_KIN: "rkmk", _RB: "rkmk", _ODE: "rkmk"}
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
_BS = "Bogacki & Shampine 1989"
_MIZERSKI = "Mizerski 2020, secs. 7-10"

_ENTRIES = (
    Method("lie_euler", "Lie-Euler exponential update", "Lie-Euler", 1,
           {_KIN: "cg", _RB: "lie_euler"}, "Rucker 2018, eq. 24", tableau=_CG1,
           solver="LieEuler", step=True),
    Method("exp2", "Second-order exponential update (rigid body: exponential midpoint)",
           "exponential", 2, {_KIN: "exp2", _RB: "cg"}, "Rucker 2018, eq. 28",
           tableau=_tab(((), ("1/2",)), (0, 1), (0, "1/2")), solver="Exp2", step=True),
    Method("magnus_ca", "Magnus expansion for constant angular acceleration over the step",
           "Magnus", 2, {_KIN: "magnus_ca"}, "[NIRD]", solver="MagnusCA", step=True),
    Method("magnus2", "Midpoint Magnus method", "Magnus", 2, {_KIN: "magnus"}, _GAUSS,
           nodes=(0.5,), solver="Magnus2", step=True),
    Method("magnus4", "Fourth-order Magnus method (two Gauss nodes)", "Magnus", 4,
           {_KIN: "magnus"}, _GAUSS, nodes=_GL2, solver="Magnus4", step=True),
    Method("magnus6", "Sixth-order Magnus method (three Gauss nodes)", "Magnus", 6,
           {_KIN: "magnus"}, _GAUSS,
           nodes=_GL3, solver="Magnus6", step=True,
           embedded=Embedded(PairKind.MAGNUS, 4, (), (), nodes=_GL2)),
    Method("magnus8", "Eighth-order Magnus method (four Gauss nodes)", "Magnus", 8,
           {_KIN: "magnus"}, _GAUSS,
           nodes=_GL4, solver="Magnus8", step=True,
           embedded=Embedded(PairKind.MAGNUS, 6, (), (), nodes=_GL3)),
    Method("cg1", "Crouch-Grossman method of order 1", "Crouch-Grossman", 1,
           {_KIN: "cg", _RB: "cg"}, _CG, tableau=_CG1, solver="CG1"),
    Method("cg2", "Crouch-Grossman method of order 2 (Heun's tableau)", "Crouch-Grossman", 2,
           {_KIN: "cg", _RB: "cg"}, _CG, tableau=_tab(((), (1,)), ("1/2", "1/2"), (0, 1)),
           solver="CG2", step=True),
    Method("cg3", "Crouch-Grossman method of order 3", "Crouch-Grossman", 3,
           {_KIN: "cg", _RB: "cg"}, _CG,
           tableau=_tab(((), ("3/4",), ("119/216", "17/108")), ("13/51", "-2/3", "24/17"),
                        (0, "3/4", "17/24")), solver="CG3", step=True),
    Method("rk3", "Kutta's third-order Runge-Kutta on non-unit quaternions", "Runge-Kutta", 3,
           {_KIN: "rk3", _RB: "rk3", _ODE: "rk3"}, _RUCKER,
           tableau=_tab(((), ("1/2",), (-1, 2)), ("1/6", "2/3", "1/6"), (0, "1/2", 1)),
           solver="RK3", step=True),
    Method("rk4", "Classical Runge-Kutta on non-unit quaternions", "Runge-Kutta", 4,
           {_KIN: "rk4", _RB: "rk4", _ODE: "rk4"}, _RUCKER,
           tableau=_tab(((), ("1/2",), (0, "1/2"), (0, 0, 1)), ("1/6", "1/3", "1/3", "1/6"),
                        (0, "1/2", "1/2", 1)), solver="RK4", step=True),
    Method("bs3", "Bogacki-Shampine 3(2) with error control and dense output", "Runge-Kutta",
           3, _ERK3, _BS, tableau=_bs3()[0], embedded=_bs3()[1],
           scipy="RK23"),
    Method("dopri5", "Dormand-Prince 5(4) with error control and dense output", "Runge-Kutta",
           5, _ERK3, "Dormand & Prince 1980; Hairer, Norsett & Wanner "
           "1993, sec. II.5", tableau=_dopri5()[0], embedded=_dopri5()[1], scipy="RK45"),
    Method("dop853", "Dormand-Prince 8(5,3) with error control and dense output",
           "Runge-Kutta", 8, _ERK3, "Hairer, Norsett & Wanner 1993, "
           "sec. II.10 (DOP853)", tableau=_dop853()[0], embedded=_dop853()[1], scipy="DOP853"),
    Method("rkmk3", "Runge-Kutta-Munthe-Kaas with the Bogacki-Shampine 3(2) pair",
           "Munthe-Kaas", 3, _RKMK3, f"{_BS}; {_RKMK}",
           tableau=_bs3()[0], embedded=_bs3()[1]),
    Method("rkmk5", "Runge-Kutta-Munthe-Kaas with the Dormand-Prince 5(4) pair", "Munthe-Kaas",
           5, _RKMK3, _RKMK, tableau=_dopri5()[0], embedded=_dopri5()[1],
           solver="RKMK5"),
    Method("rkmk8", "Runge-Kutta-Munthe-Kaas with the Dormand-Prince 8(5,3) pair",
           "Munthe-Kaas", 8, _RKMK3, _RKMK, tableau=_dop853()[0],
           embedded=_dop853()[1], solver="RKMK8"),
    Method("ab3", "Variable-step Adams-Bashforth 3 on non-unit quaternions", "multistep", 3,
           {_KIN: "ab3", _RB: "ab3", _ODE: "ab3"}, _RUCKER),
    Method("rkn4", "Runge-Kutta-Nystrom on the second-order quaternion equation", "Nystrom", 4,
           {_RB: "rkn4"}, "Mandre 2008, secs. 5-6", solver="RKN4"),
    Method("implicit_midpoint", "Implicit midpoint rule for the rigid body", "implicit", 2,
           {_RB: "implicit"}, _MIZERSKI, variant="midpoint", solver="ImplicitMidpoint",
           defaults={"substep_angle": 0.025}),
    Method("trapezoid", "World-frame trapezoidal rule for the rigid body", "implicit", 2,
           {_RB: "implicit"}, _MIZERSKI, variant="trapezoid", solver="Trapezoid",
           defaults={"substep_angle": 0.25}),
    Method("object_trapezoid", "Body-frame trapezoidal rule for the rigid body", "implicit", 2,
           {_RB: "implicit"}, _MIZERSKI, variant="object_trapezoid",
           solver="ObjectTrapezoid", defaults={"substep_angle": 0.25}),
)

#: name -> Method, in the order of the docs table.
REGISTRY = {m.name: m for m in _ENTRIES}


def get(name: str, model: str | None = None) -> Method:
    """The `Method` called `name` (checked to integrate `model` when given).

    Parameters
    ----------
    name : str
        A registry name, e.g. "rk4".
    model : {"kinematics", "rigid body", "ode"}, optional
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
          family: str | None = None, runner: str | None = None) -> tuple[str, ...]:
    """Names of the registry's methods, filtered.

    Parameters
    ----------
    model : {"kinematics", "rigid body", "ode"}, optional
        Only the methods that integrate this model kind.
    kernel : str, optional
        Only those whose kernel for `model` is this one (with `model`).
    family : str, optional
        Only those of this family (`Method.family`).
    runner : {"kinematic", "dynamic", "implicit"}, optional
        Only those that this runner steps for `model` (with `model`; `Kernel.runner`).

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
                 and (family is None or m.family == family)
                 and (runner is None or (model in m.kernels and m.runner(model) == runner)))


def check_sizes(model, limits=None, entries=None):
    """Raise ValueError for a registry entry that a compiled kernel cannot hold.

    Every `Method` is checked against its kernels' `Kernel.limits` when it is made; this
    checks entries against other limits (a kernel built with smaller arrays).

    Parameters
    ----------
    model : {"kinematics", "rigid body", "ode"}
        The model kind whose kernels `limits` describes.
    limits : dict, optional
        Kernel name -> ``{"stages": n, "nodes": m, "powers": p}``, the most each compiled
        kernel holds (a kernel absent from `limits` is not checked; default: the registry's
        `Kernel.limits`).
    entries : iterable of Method, optional
        The entries to check (default: the whole registry).

    Raises
    ------
    ValueError
        Naming the method, its kernel and the size it exceeds.

    See Also
    --------
    sizes, check_compiled
    """
    if limits is None:
        limits = {k: rec.limits for (md, k), rec in KERNELS.items() if md == model}
    for m in REGISTRY.values() if entries is None else entries:
        kernel = m.kernels.get(model)
        if kernel not in limits:
            continue
        need = sizes(m)
        for what, most in limits[kernel].items():
            if need[what] > most:
                raise ValueError(f"method {m.name!r} needs {need[what]} {what} in the "
                                 f"{model} kernel {kernel!r}, which holds at most {most}")


def check_compiled(model, capacity):
    """Raise ImportError when a runner's C arrays hold less than the registry's limits.

    Each compiled runner calls this when it is imported, with the sizes of its arrays keyed
    by kernel code (the enum of rotode/_driver.pxd), so that no entry the registry accepts
    (`Kernel.limits`) can be copied past the end of an array.

    Parameters
    ----------
    model : {"kinematics", "rigid body", "ode"}
    capacity : dict
        Kernel code -> ``{"stages": n, "nodes": m, "powers": p}`` as compiled.

    Raises
    ------
    ImportError
        Naming the kernel and the size.
    """
    for code, held in capacity.items():
        rec = KERNELS[model, KERNEL_NAMES[code]]
        for what, most in rec.limits.items():
            if held.get(what, 0) < most:
                raise ImportError(f"the {model} kernel {rec.name!r} holds {held.get(what, 0)} "
                                  f"{what}, less than the registry's limit {most} "
                                  f"(rotode.methods.KERNELS)")


def check_kernel_enum(enum_class):
    """Raise ImportError unless `enum_class` (``Kernel`` of rotode/_driver.pxd, as Cython
    exposes it) has exactly the members ``KERNEL_<NAME>`` = ``KERNEL_NAMES.index(name)``."""
    compiled = {m.name: m.value for m in enum_class}
    want = {f"KERNEL_{name.upper()}": code for code, name in enumerate(KERNEL_NAMES)}
    if compiled != want:
        raise ImportError(f"the kernel enum of rotode/_driver.pxd {compiled} is not the "
                          f"registry's KERNEL_NAMES {want}")


def kernel_codes(model):
    """Kernel name -> code of the kernels that step `model` (the runners' ``KERNELS``)."""
    return {k: rec.code for (md, k), rec in KERNELS.items() if md == model}


def kernel_limits(model, runner=None):
    """Kernel name -> `Kernel.limits` of the kernels of `model` that have limits (the
    runners' ``LIMITS``), only those of `runner` when given."""
    return {k: dict(rec.limits) for (md, k), rec in KERNELS.items()
            if md == model and rec.limits and (runner is None or rec.runner == runner)}


def taking(option, model):
    """The names of the methods that take `option` for `model` (for messages)."""
    return tuple(m.name for m in REGISTRY.values()
                 if model in m.kernels and option in m.options(model))


def register(method):
    """Add `method` to the registry, so that `rotode.integrate` (and the runners) run it.

    The entry was checked when it was made (`Method`); an embedded pair is its coefficients
    (`Tableau`, `Embedded`) and one entry on the state (kernel ``erk``) or on the rotation
    group (``rkmk``).  The modules' name lists that were read at import
    (``rotode.kinematic.METHODS``, ``rotode.integration.METHODS``, the solver classes) are
    not extended.

    Parameters
    ----------
    method : Method

    Returns
    -------
    Method
        `method`.

    Raises
    ------
    TypeError
        For anything but a `Method`.
    ValueError
        When its name is already registered.

    See Also
    --------
    unregister

    Examples
    --------
    >>> import dataclasses
    >>> from rotode import methods
    >>> twin = methods.register(dataclasses.replace(methods.get("cg2"), name="cg2_twin"))
    >>> "cg2_twin" in methods.names("rigid body")
    True
    >>> methods.unregister("cg2_twin") is twin
    True
    """
    if not isinstance(method, Method):
        raise TypeError(f"`method` must be a rotode.methods.Method, got "
                        f"{type(method).__name__}")
    if method.name in REGISTRY:
        raise ValueError(f"method {method.name!r} is already registered")
    REGISTRY[method.name] = method
    return method


def unregister(name):
    """Remove the method called `name` from the registry; `register`'s inverse.

    Parameters
    ----------
    name : str
        A registered name.

    Returns
    -------
    Method
        The entry removed.

    Raises
    ------
    ValueError
        When no method of that name is registered.

    See Also
    --------
    register

    Examples
    --------
    >>> from rotode import methods
    >>> methods.unregister("no_such_method")
    Traceback (most recent call last):
        ...
    ValueError: no registered method 'no_such_method'
    """
    try:
        return REGISTRY.pop(name)
    except (KeyError, TypeError):
        raise ValueError(f"no registered method {name!r}") from None


def by_solver(class_name, ignore_case=False):
    """The `Method` whose ``OdeSolver`` class is called `class_name` (in any case with
    `ignore_case`); LookupError if none is."""
    key = class_name.lower() if ignore_case else class_name
    for m in REGISTRY.values():
        if m.solver is not None and (m.solver.lower() if ignore_case else m.solver) == key:
            return m
    raise LookupError(f"no registry method has the solver class {class_name!r}")


def markdown_table() -> str:
    """The table of docs/methods.md, from the registry.

    Returns
    -------
    str
        A Markdown table, one row per method: name, family, order, kernels, Lie group (|q| kept
        by construction), error estimate, ``solve_ivp`` class or method name and reference.

    See Also
    --------
    names, REGISTRY

    Examples
    --------
    >>> from rotode import methods
    >>> print(methods.markdown_table().splitlines()[2][:58])
    | `lie_euler` | Lie-Euler | 1 | `cg` | `lie_euler` | yes |
    """
    rows = ["| method | family | order | kinematics | rigid body | Lie group | "
            "`rtol` (estimate order) | `solve_ivp` | reference |",
            "|---|---|---|---|---|---|---|---|---|"]
    for m in REGISTRY.values():
        kin = f"`{m.kernels[_KIN]}`" if _KIN in m.kernels else ""
        rb = f"`{m.kernels[_RB]}`" if _RB in m.kernels else ""
        cls = (f"`rotode.{m.solver}`" if m.solver
               else f'`method="{m.scipy}"`' if m.scipy else "")
        ctl = f"yes ({m.embedded.error_order})" if m.embedded is not None else ""
        group = "yes" if m.group else ""
        rows.append(f"| `{m.name}` | {m.family} | {m.order} | {kin} | {rb} | {group} | {ctl} | "
                    f"{cls} | {m.reference} |")
    return "\n".join(rows) + "\n"


def __dir__():
    """The public names, ``__all__`` (not the imported helpers)."""
    return list(__all__)
