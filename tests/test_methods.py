"""The method registry (rotode.methods): consistency with the runners, the solver classes and
the docs, exact coefficients, and that adding a method is one registry entry."""
import dataclasses
import inspect
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pytest

import rotode
from rotode import dynamic, implicit, integration, kinematic, methods, ode, solvers

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_every_method_has_a_kernel_in_its_runner():
    for m in methods.REGISTRY.values():
        assert m.models, m.name
        for model in m.models:
            runner = integration.runner_for(m, model)
            assert m.name in runner.METHODS
            kernel = m.kernel(model)
            if runner is implicit:
                assert m.variant in implicit.VARIANTS
            else:
                assert kernel in runner.KERNELS, (m.name, model, kernel)
            if kernel == "cg":
                assert m.tableau is not None
            if kernel == "magnus":
                assert 1 <= len(m.nodes) <= 4


def test_runners_list_exactly_the_registry():
    assert set(kinematic.METHODS) == set(methods.names("kinematics"))
    assert set(dynamic.METHODS) | set(implicit.METHODS) == set(methods.names("rigid body"))
    assert not set(dynamic.METHODS) & set(implicit.METHODS)
    assert set(ode.METHODS) == set(methods.names("ode"))
    assert set(integration.METHODS) == set(methods.REGISTRY)


def test_unknown_names_and_models_are_refused_with_the_choices():
    with pytest.raises(ValueError, match="must be one of"):
        methods.get("cg9")
    with pytest.raises(ValueError, match="does not integrate kinematics"):
        methods.get("rkn4", "kinematics")
    with pytest.raises(ValueError, match="`kind`"):
        methods.names("fluid")


def test_tableaux_are_exact_and_consistent():
    for m in methods.REGISTRY.values():
        if m.tableau is None:
            continue
        t = m.tableau
        assert all(isinstance(x, Fraction) for x in t.b + t.c)
        # exact, except DOP853's coefficients, published as 30-digit decimals
        tol = Fraction(1, 10**25) if m.tableau == methods.get("dop853").tableau else 0
        for i, row in enumerate(t.a):                     # row sums equal the nodes
            assert abs(sum(row, Fraction(0)) - t.c[i]) <= tol
        assert abs(sum(t.b, Fraction(0)) - 1) <= tol      # order 1
        a, b, c = t.doubles                               # correctly rounded doubles
        assert b == tuple(float(x) for x in t.b) and c == tuple(float(x) for x in t.c)


@pytest.mark.parametrize("name", methods.names("kinematics", "magnus"))
def test_gauss_nodes_are_the_legendre_roots_to_one_ulp(name):
    """(magnus4's first node, 0.5 - sqrt(3)/6 evaluated in double, is one ulp from the
    correctly rounded root; it is kept so that results stay bit-identical across releases.)"""
    nodes = methods.get(name).nodes
    mpmath.mp.dps = 40
    s = len(nodes)
    roots = sorted(mpmath.polyroots(mpmath.taylor(lambda x: mpmath.legendre(s, x), 0, s)[::-1],
                                    maxsteps=200, extraprec=200))
    exact = [float((1 + r) / 2) for r in roots]
    assert all(abs(a - b) <= np.spacing(b) for a, b in zip(nodes, exact, strict=True)), nodes
    # and a Magnus method of s nodes has order 2 s
    assert methods.get(name).order == 2 * s


def test_solver_classes_are_the_registry_entries():
    classes = {name for name, obj in vars(solvers).items()
               if inspect.isclass(obj) and issubclass(obj, solvers.NativeSolver)
               and obj is not solvers.NativeSolver}
    registered = {m.solver for m in methods.REGISTRY.values() if m.solver}
    assert classes == registered == set(solvers.__all__)
    for name in classes:
        cls = getattr(rotode, name)                       # exported at the top level
        spec = methods.by_solver(name)
        assert cls._method == spec.name and cls.order == spec.order
        assert f'method="{spec.name}"' in cls.__doc__ and spec.reference in cls.__doc__
        assert inspect.getsource(cls).startswith(f"class {name}(NativeSolver):")


def test_docs_table_is_the_registry():
    text = (DOCS / "methods.md").read_text()
    assert methods.markdown_table() in text, "regenerate it with methods.markdown_table()"


def _order_conditions(b, A, c, order):
    """The order conditions up to `order` (at most 4: the bushy and tall trees and the two
    mixed ones of order 4) as (computed, exact) pairs."""
    s = len(b)
    r = range(s)
    F = Fraction
    out = [(sum(b, F(0)), F(1))]
    if order >= 2:
        out.append((sum(b[i] * c[i] for i in r), F(1, 2)))
    if order >= 3:
        out += [(sum(b[i] * c[i] ** 2 for i in r), F(1, 3)),
                (sum(b[i] * A[i][j] * c[j] for i in r for j in r), F(1, 6))]
    if order >= 4:
        out += [(sum(b[i] * c[i] ** 3 for i in r), F(1, 4)),
                (sum(b[i] * c[i] * A[i][j] * c[j] for i in r for j in r), F(1, 8)),
                (sum(b[i] * A[i][j] * c[j] ** 2 for i in r for j in r), F(1, 12)),
                (sum(b[i] * A[i][j] * A[j][k] * c[k] for i in r for j in r for k in r),
                 F(1, 24))]
    return out


@pytest.mark.parametrize("name", methods.names(kernel="erk", model="kinematics"))
def test_embedded_pairs_meet_their_order_conditions(name):
    """Order conditions of the pairs up to order 4 (or the pair's order), those of the
    embedded solution ``bhat = b + e`` (SciPy's sign: e = bhat - b) up to its error order, and
    the error weights annihilate the constants: sum e_j = 0 (both solutions are consistent)."""
    m = methods.get(name)
    t, emb = m.tableau, m.embedded
    s = t.stages
    A = [[t.a[i][j] if j < i else Fraction(0) for j in range(s + 1)] for i in range(s)]
    A.append(list(t.b) + [Fraction(0)])                   # the FSAL stage: a = b, c = 1
    b, c = t.b, t.c
    tol = Fraction(1, 10**24) if name == "dop853" else 0

    def close(x, y):
        return abs(x - y) <= tol

    for got, want in _order_conditions(b, A, c, min(m.order, 4)):
        assert close(got, want), (got, want)
    assert close(sum(emb.e, Fraction(0)), 0)
    if emb.e3 is not None:
        assert close(sum(emb.e3, Fraction(0)), 0)
    if emb.kind == methods.PairKind.STANDARD:
        bhat = [x + y for x, y in zip(tuple(b) + (Fraction(0),), emb.e, strict=True)]
        for got, want in _order_conditions(bhat, A, tuple(c) + (Fraction(1),),
                                           min(emb.error_order, 4)):
            assert got == want, (got, want)
        # the dense output interpolates: at theta = 1 it is the step's b (and 0 on FSAL)
        assert [sum(row, Fraction(0)) for row in emb.dense] == list(b) + [0]


def _cg_ralston():
    """Ralston's second-order tableau as a Crouch-Grossman method: a21 = 2/3, b = (1/4, 3/4)."""
    F = Fraction
    return methods.Method(
        "cg2_ralston", "Crouch-Grossman method of order 2 (Ralston's tableau)",
        "Crouch-Grossman", 2, {"kinematics": "cg", "rigid body": "cg"}, "Ralston 1962",
        tableau=methods.Tableau(((), (F(2, 3),)), (F(1, 4), F(3, 4)), (F(0), F(2, 3))))


def test_adding_a_method_is_one_registry_entry(monkeypatch):
    """A new tableau runs through the existing kernels of both models at its order."""
    monkeypatch.setitem(methods.REGISTRY, "cg2_ralston", _cg_ralston())
    w = rotode.omega.Sinusoid(amplitude=1.5, rate=2.0, phase=[0.0, 1.0, 2.0])
    ref = rotode.integrate(w, (0, 2), [1, 0, 0, 0], method="magnus8", dt=1e-3).q[-1]
    errs = [np.linalg.norm(rotode.integrate(w, (0, 2), [1, 0, 0, 0], method="cg2_ralston",
                                            dt=2.0 / n).q[-1] - ref) for n in (50, 100, 200)]
    slope = np.polyfit(np.log([50, 100, 200]), np.log(errs), 1)[0]
    assert abs(slope + 2) < 0.15, errs
    body = rotode.RigidBody(np.diag([1.0, 2.0, 2.5]))
    y0 = [1, 0, 0, 0, 0.3, 1.0, -0.4]
    yref = rotode.integrate(body, (0, 1), y0, method="rk4", dt=1e-4).y[-1]
    errs = [np.linalg.norm(rotode.integrate(body, (0, 1), y0, method="cg2_ralston",
                                            dt=1.0 / n).y[-1] - yref) for n in (25, 50, 100)]
    slope = np.polyfit(np.log([25, 50, 100]), np.log(errs), 1)[0]
    assert abs(slope + 2) < 0.15, errs


def test_a_changed_entry_changes_the_kernel(monkeypatch):
    """The kernels read the registry's doubles at run time (no second copy of the weights)."""
    w = np.array([[0.3, -1.0, 2.0]])
    q0 = np.array([[1.0, 0, 0, 0]])
    t, save = np.array([0.0, 0.1]), np.array([1])
    before = kinematic.run("cg2", w, q0, t, save, {}, 1)[0]
    monkeypatch.setitem(methods.REGISTRY, "cg2", dataclasses.replace(
        methods.get("cg2"), tableau=_cg_ralston().tableau))
    after = kinematic.run("cg2", w, q0, t, save, {}, 1)[0]
    # constant w: any weights summing to 1 give the same rotation, up to round-off only
    np.testing.assert_allclose(after, before, atol=1e-15)
    w_t = rotode.omega.Sinusoid(amplitude=1.0, rate=3.0, phase=0.5)
    a = kinematic.run("cg2", w_t, q0, t, save, {}, 1)[0]
    monkeypatch.undo()
    b = kinematic.run("cg2", w_t, q0, t, save, {}, 1)[0]
    assert not np.array_equal(a, b)


def test_the_library_never_imports_the_studies():
    """Demo, studies and the T-handle case live in rotode.studies, outside the core's imports."""
    code = ("import sys, numpy as np, rotode; "
            "rotode.integrate([0, 0, 1.0], (0, 1), [1, 0, 0, 0], method='cg3', dt=0.1); "
            "rotode.integrate(rotode.RigidBody([1, 2, 2.5]), (0, 1), [1, 0, 0, 0, 0, 1, 0], "
            "method='implicit_midpoint', dt=0.1); "
            "print(sorted(m for m in sys.modules if m.startswith('rotode.studies')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(rotode.__file__).parents[1])
    assert out.stdout.strip() == "[]", out


def test_registry_entries_fit_the_compiled_kernels():
    """An entry is checked against its kernels' limits (the most stages and nodes their C arrays
    hold, `Kernel.limits`) when it is made: a tableau with one stage too many raises then, at
    import for an entry of rotode/methods.py, instead of being copied past an array's end."""
    from rotode import methods as M

    for model in M.MODELS:
        M.check_sizes(model)                               # the registry as it is fits
    cg3 = M.get("cg3")
    four = M.Tableau(cg3.tableau.a + ((0, 0, 0),), cg3.tableau.b + (0,), cg3.tableau.c + (1,))
    # the kinematic kernel holds 4 stages, the rigid-body one 3
    M.Method("cg4x", "a four-stage Crouch-Grossman", "Crouch-Grossman", 3,
             {"kinematics": "cg"}, "test", tableau=four)
    with pytest.raises(ValueError, match="'cg4x' needs 4 stages in the rigid body kernel 'cg'"):
        M.Method("cg4x", "a four-stage Crouch-Grossman", "Crouch-Grossman", 3,
                 {"kinematics": "cg", "rigid body": "cg"}, "test", tableau=four)
    dop = M.get("dop853")
    with pytest.raises(ValueError, match="holds at most 4"):
        M.check_sizes("kinematics", {"erk": {"stages": 4}}, [dop])
    with pytest.raises(ValueError, match="embedded kind 'bs32' is not one of the pair kinds"):
        M.Embedded("bs32", 2, (), ())
    with pytest.raises(ValueError, match="'magnus' is not one of the compiled pairs"):
        M.Method("pair", "a pair of the wrong kind", "Runge-Kutta", 5, {"kinematics": "erk"},
                 "test", tableau=dop.tableau, embedded=M.Embedded("magnus", 2, (), ()))
    with pytest.raises(ValueError, match="needs 5 nodes"):
        M.Method("magnus10", "five Gauss nodes", "Magnus", 10, {"kinematics": "magnus"},
                 "test", nodes=(0.1, 0.3, 0.5, 0.7, 0.9))
    # a pair: its stages, the FSAL stage and its dense-output stages within ERK_MAX_STAGES
    dopri5 = M.get("dopri5")
    big = M.Tableau(tuple(r + (0,) * 0 for r in dop.tableau.a) + ((0,) * 12, (0,) * 13,
                                                                    (0,) * 14, (0,) * 15),
                    dop.tableau.b + (0,) * 4, dop.tableau.c + (1,) * 4)
    emb = M.Embedded("standard", 4, (0,) * 17, ((0,) * 4,) * 17)
    with pytest.raises(ValueError, match="needs 17 stages in the kinematics kernel 'erk'"):
        M.Method("big", "sixteen stages", "Runge-Kutta", 5, {"kinematics": "erk"}, "test",
                 tableau=big, embedded=emb)
    five = M.Embedded("standard", 4, dopri5.embedded.e,
                      tuple(r + (0,) for r in dopri5.embedded.dense))
    with pytest.raises(ValueError, match="needs 5 powers"):
        M.Method("p5", "a quintic dense output", "Runge-Kutta", 5, {"kinematics": "erk"}, "test",
                 tableau=dopri5.tableau, embedded=five)
    # unknown kernels, data a kernel cannot step, kernels that disagree on |q|
    with pytest.raises(ValueError, match="no kinematics kernel 'rk5'"):
        M.Method("x", "x", "Runge-Kutta", 5, {"kinematics": "rk5"}, "test")
    with pytest.raises(ValueError, match="'cg' kernel needs a `tableau`"):
        M.Method("x", "x", "Crouch-Grossman", 2, {"kinematics": "cg"}, "test")
    with pytest.raises(ValueError, match="`variant` must be one of"):
        M.Method("x", "x", "implicit", 2, {"rigid body": "implicit"}, "test", variant="euler")
    with pytest.raises(ValueError, match="not all Lie-group kernels"):
        M.Method("x", "x", "Runge-Kutta", 4, {"kinematics": "rk4", "rigid body": "cg"}, "test",
                 tableau=M.get("rk4").tableau)


def test_the_runners_arrays_hold_the_registrys_limits():
    """Each runner checks at import that its C arrays hold what the registry allows."""
    from rotode import _driver

    for model in M_MODELS:
        for (md, name), rec in methods.KERNELS.items():
            if md != model or not rec.limits:
                continue
            methods.check_compiled(model, {rec.code: rec.limits})      # equal: fine
            short = {rec.code: {k: v - 1 for k, v in rec.limits.items()}}
            with pytest.raises(ImportError, match=f"kernel {name!r} holds"):
                methods.check_compiled(model, short)
    assert _driver.Kernel is not None


M_MODELS = methods.MODELS


def test_one_kernel_enum_is_the_registrys():
    """The enum every runner switches on (rotode/_driver.pxd, visible as rotode._driver.Kernel)
    has one member per registry kernel, with the registry's codes."""
    from rotode import _driver

    assert {m.name: int(m) for m in _driver.Kernel} == {
        f"KERNEL_{name.upper()}": code for code, name in enumerate(methods.KERNEL_NAMES)}
    methods.check_kernel_enum(_driver.Kernel)
    with pytest.raises(ImportError, match="kernel enum"):
        methods.check_kernel_enum(methods.PairKind)
    # the .pxd itself (what a runner cimports) lists the same members
    pxd = (Path(rotode.__file__).parent / "_driver.pxd").read_text()
    import re
    found = dict(re.findall(r"^    (KERNEL_\w+) = (\d+)", pxd, flags=re.M))
    assert {k: int(v) for k, v in found.items()} == {m.name: int(m) for m in _driver.Kernel}
    # every model's kernel is a member; every member steps some model
    assert {name for _, name in methods.KERNELS} == set(methods.KERNEL_NAMES)
    for m in methods.REGISTRY.values():
        for model in m.models:
            assert methods.KERNEL_NAMES[m.code(model)] == m.kernel(model)
    for runner in (kinematic, dynamic):
        for name, code in runner.KERNELS.items():
            assert methods.KERNEL_NAMES[code] == name


def test_the_registry_holds_the_properties_code_tested_by_name():
    """Lie group or not, pair kind, options, runner: properties of the registry's kernels."""
    group = {m.name for m in methods.REGISTRY.values() if m.group}
    assert group == {"lie_euler", "exp2", "magnus_ca", "magnus2", "magnus4", "magnus6",
                     "magnus8", "cg1", "cg2", "cg3", "rkmk3", "rkmk5", "rkmk8",
                     "implicit_midpoint", "trapezoid", "object_trapezoid"}
    P = methods.PairKind
    assert {n: methods.get(n).pair_kind for n in methods.names() if methods.get(n).adaptive} == {
        "magnus6": P.MAGNUS, "magnus8": P.MAGNUS, "bs3": P.STANDARD, "dopri5": P.STANDARD,
        "dop853": P.DOP853, "rkmk3": P.STANDARD, "rkmk5": P.STANDARD, "rkmk8": P.DOP853}
    assert P("dop853") is P.DOP853 and P(0) is P.STANDARD
    # the options: the vector-space methods take norm_gain/normalize, the Lie-group ones exp
    for name in methods.names("kinematics"):
        takes = methods.get(name).options("kinematics")
        assert "frame" in takes
        assert ("exp" in takes) == (methods.get(name).group and methods.get(name).kernel(
            "kinematics") != "rkmk")
        assert ("norm_gain" in takes) != methods.get(name).group
    assert methods.taking("qdot0", "rigid body") == ("rkn4",)
    assert methods.taking("terms", "kinematics") == ("magnus_ca",)
    assert set(methods.names("rigid body", runner="implicit")) == set(implicit.METHODS)
    assert {name: methods.get(name).scipy for name in methods.names()
            if methods.get(name).scipy} == {"bs3": "RK23", "dopri5": "RK45", "dop853": "DOP853"}
    from rotode import ivp, steps
    assert ivp.COMPILED_METHODS == {"RK23": "bs3", "RK45": "dopri5", "DOP853": "dop853"}
    assert [n for n in steps.__all__ if n != "NODES"] == [
        n for n in methods.names("kinematics") if methods.get(n).step]
    assert implicit.DEFAULT_SUBSTEP_ANGLE == {
        methods.get(n).variant: methods.get(n).defaults["substep_angle"]
        for n in implicit.METHODS}


@pytest.mark.parametrize("option, value, model", [
    ("exp", "approx", "kinematics"), ("norm_gain", 1.0, "kinematics"),
    ("normalize", True, "kinematics"), ("terms", 3, "kinematics"),
    ("normalize", True, "rigid body"), ("torque_substeps", 2, "rigid body"),
    ("qdot0", [0.0, 0.0, 0.0, 0.0], "rigid body")])
def test_a_method_takes_exactly_its_registry_options(option, value, model):
    """Every method of a model either runs with the option or refuses it with TypeError, as
    its kernel's `Kernel.options` say."""
    w = np.array([0.3, -0.2, 0.5])
    for name in methods.names(model):
        m = methods.get(name)
        if model == "kinematics":
            args = (w, (0, 0.2), [1.0, 0, 0, 0])
        else:
            args = (rotode.RigidBody([1.0, 2.0, 2.5]), (0, 0.2), [1.0, 0, 0, 0, 0.3, 1.0, -0.4])
        step = {"rtol": 1e-6} if m.adaptive else {"dt": 0.05}
        if option in m.options(model):
            rotode.integrate(*args, method=name, **step, **{option: value})
        else:
            with pytest.raises(TypeError, match=option):
                rotode.integrate(*args, method=name, **step, **{option: value})


def test_registered_methods_run_and_unregister():
    twin = dataclasses.replace(methods.get("rkmk5"), name="rkmk5_twin", solver=None)
    assert methods.register(twin) is twin
    try:
        with pytest.raises(ValueError, match="already registered"):
            methods.register(twin)
        top = rotode.RigidBody([1.0, 1.0, 0.5])
        y0 = [1.0, 0, 0, 0, 1.5, 0, 1]
        a = rotode.integrate(top, (0, 2), y0, method="rkmk5_twin", rtol=1e-8)
        b = rotode.integrate(top, (0, 2), y0, method="rkmk5", rtol=1e-8)
        np.testing.assert_array_equal(a.y, b.y)
    finally:
        assert methods.unregister("rkmk5_twin") is twin
    with pytest.raises(ValueError, match="no registered method"):
        methods.unregister("rkmk5_twin")
    with pytest.raises(TypeError, match="Method"):
        methods.register("rkmk5")


def test_no_runner_lists_kernels_or_method_names():
    """The runners and the driver name no method, kernel or residual variant in their code
    (docstrings, comments and the documented defaults of ``def`` lines aside): they read the
    registry and switch on the kernel enum."""
    import re

    names = set(methods.REGISTRY) | set(methods.KERNEL_NAMES) | set(methods.VARIANTS)
    root = Path(rotode.__file__).parent
    for module in ("kinematic.pyx", "dynamic.pyx", "implicit.pyx", "_driver.pyx"):
        code = re.sub(r'"""[\s\S]*?"""', "", (root / module).read_text())
        code = "\n".join(line.split("#")[0] for line in code.splitlines()
                         if not line.lstrip().startswith("def "))
        found = {m.group(2) for m in re.finditer(r"([\"'])(\w+)\1", code)} & names
        assert not found, (module, found)
