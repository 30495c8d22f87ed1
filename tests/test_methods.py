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
from rotode import dynamic, implicit, integration, kinematic, methods, solvers

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


@pytest.mark.parametrize("name", ["dopri5", "dop853"])
def test_embedded_pairs_meet_their_order_conditions(name):
    """Order conditions of the pairs up to order 4 (bushy and tall trees), and the error
    weights annihilate the constants: sum e_j = 0 (both solutions are consistent)."""
    m = methods.get(name)
    t, emb = m.tableau, m.embedded
    s = t.stages
    A = [[t.a[i][j] if j < i else Fraction(0) for j in range(s)] for i in range(s)]
    b, c = t.b, t.c
    tol = Fraction(1, 10**24) if name == "dop853" else 0

    def close(x, y):
        return abs(x - y) <= tol

    assert close(sum(b[i] * c[i] for i in range(s)), Fraction(1, 2))
    assert close(sum(b[i] * c[i] ** 2 for i in range(s)), Fraction(1, 3))
    assert close(sum(b[i] * A[i][j] * c[j] for i in range(s) for j in range(s)), Fraction(1, 6))
    assert close(sum(b[i] * c[i] ** 3 for i in range(s)), Fraction(1, 4))
    assert close(sum(emb.e, Fraction(0)), 0)
    if emb.e3 is not None:
        assert close(sum(emb.e3, Fraction(0)), 0)


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
    """Every runner checks the registry against its C arrays when imported (a tableau with one
    stage too many would be copied past their ends); the check refuses such an entry."""
    from rotode import dynamic, kinematic
    from rotode import methods as M

    for model, limits in (("kinematics", kinematic.LIMITS), ("rigid body", dynamic.LIMITS)):
        M.check_sizes(model, limits)                       # the registry as it is fits
    cg3 = M.get("cg3")
    four = M.Tableau(cg3.tableau.a + ((0, 0, 0),), cg3.tableau.b + (0,), cg3.tableau.c + (1,))
    big = M.Method("cg4x", "a four-stage Crouch-Grossman", "Crouch-Grossman", 3,
                   {"kinematics": "cg", "rigid body": "cg"}, "test", tableau=four)
    M.check_sizes("kinematics", kinematic.LIMITS, [big])    # the kinematic kernel holds 4
    with pytest.raises(ValueError, match="'cg4x' needs 4 stages in the rigid body kernel 'cg'"):
        M.check_sizes("rigid body", dynamic.LIMITS, [big])
    dop = M.get("dop853")
    with pytest.raises(ValueError, match="holds at most 4"):
        M.check_sizes("kinematics", {"erk": {"stages": 4}}, [dop])
    other = M.Method("pair", "a pair of an unknown kind", "Runge-Kutta", 5,
                     {"kinematics": "erk"}, "test", tableau=dop.tableau,
                     embedded=M.Embedded("bs32", 2, (), ()))
    with pytest.raises(ValueError, match="embedded kind 'bs32' is not one of the compiled"):
        M.check_sizes("kinematics", kinematic.LIMITS, [other])
    gauss5 = M.Method("magnus10", "five Gauss nodes", "Magnus", 10, {"kinematics": "magnus"},
                      "test", nodes=(0.1, 0.3, 0.5, 0.7, 0.9))
    with pytest.raises(ValueError, match="needs 5 nodes"):
        M.check_sizes("kinematics", kinematic.LIMITS, [gauss5])
