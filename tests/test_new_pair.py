"""Adding an embedded pair is its coefficients plus one registry entry (issue 27, "methods are
data all the way down").

Tsitouras' 5(4) pair (Ch. Tsitouras, "Runge-Kutta pairs of order 5(4) satisfying only the first
column simplifying assumption", Comput. Math. Appl. 62 (2011) 770-775) is written below as its
coefficients (exact rationals of the published decimals) and registered at run time with
`rotode.methods.register`: one entry on the state (kernel ``erk``) and one on the rotation
group (``rkmk``, Runge-Kutta-Munthe-Kaas).  No compiled code knows it: the driver's pair kernel
reads any "standard" pair (`rotode.methods.PairKind`) from the registry.  It runs adaptively
on both model kinds, converges at its order, keeps its tolerance proportionality and passes
the contract suite (tests/test_contract.py).  The Bogacki-Shampine 3(2) pair, added to the
registry the same way (``bs3``, ``rkmk3``), reproduces SciPy's RK23; and an entry with more
stages than its kernel holds raises when it is made, at import for an entry of
rotode/methods.py.
"""
import functools
import itertools
import math
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import scipy.integrate
import test_contract as contract

import rotode
from rotode import methods

# ---- the coefficients (Tsitouras 2011; the decimals of the paper's formulas to 80 digits, as
# OrdinaryDiffEq.jl's Tsit5 tableau gives them; the dense output is the expanded form of the
# paper's interpolant, b_i(theta) = sum_p P[i][p] theta^(p+1))
TSIT5_C = ("0", "161/1000", "327/1000", "9/10",
           "0.98002554090450968572981028628702459549421379795630247688547642932211959507610803026",
           "1")
TSIT5_A = (
    (),
    ("161/1000",),
    ("-0.8480655492356988544426874250230774675121177393430391537369234245294192976164141156943e-2",
     "0.3354806554923569885444268742502307746751211773934303915373692342452941929761641411569"),
    ("2.897153057105493432130432594192938764924887287701866490314866693455023795137503079289",
     "-6.359448489975074843148159912383825625952700647415626703305928850207288721235210244366",
     "4.362295432869581411017727318190886861027813359713760212991062156752264926097707165077"),
    ("5.325864828439256604428877920840511317836476253097040101202360397727981648835607691791",
     "-11.74888356406282787774717033978577296188744178259862899288666928009020615663593781589",
     "7.495539342889836208304604784564358155658679161518186721010132816213648793440552049753",
     "-0.9249506636175524925650207933207191611349983406029535244034750452930469056411389539635e-1"
     ),
    ("5.861455442946420028659251486982647890394337666164814434818157239052507339770711679748",
     "-12.92096931784710929170611868178335939541780751955743459166312250439928519268343184452",
     "8.159367898576158643180400794539253485181918321135053305748355423955009222648673734986",
     "-0.7158497328140099722453054252582973869127213147363544882721139659546372402303777878835e-1",
     "-0.2826905039406838290900305721271224146717633626879770007617876201276764571291579142206e-1"),
)
TSIT5_B = (
    "0.9646076681806522951816731316512876333711995238157997181903319145764851595234062815396e-1",
    "1/100",
    "0.4798896504144995747752495322905965199130404621990332488332634944254542060153074523509",
    "1.379008574103741893192274821856872770756462643091360525934940067397245698027561293331",
    "-3.290069515436080679901047585711363850115683290894936158531296799594813811049925401677",
    "2.324710524099773982415355918398765796109060233222962411944060046314465391054716027841")
#: bhat - b over the 6 stages and the FSAL stage (SciPy's sign, as rotode's pairs)
TSIT5_E = (
    "-1.780011052225771443378550607539534775944678804333659557637450799792588061629796e-03",
    "-8.164344596567469032236360633546862401862537590159047610940604670770447527463931e-04",
    "7.880878010261996010314727672526304238628733777103128603258129604952959142646516e-03",
    "-1.44711007173262907537165147972635116720922712343167677619514233896760819649515e-01",
    "5.823571654525552250199376106520421794260781239567387797673045438803694038950012e-01",
    "-4.580821059291869466616365188325542974428047279788398179474684434732070620889539e-01",
    "1/66")
TSIT5_P = (
    ("0.999999999999999974283372471559910888475488471328",
     "-2.763706197274825911336735930481400260916070804192",
     "2.91325546182191274375068099306808", "-1.0530884977290216"),
    ("0", "0.13169999999999999727", "-0.22339999999999999818", "0.1017"),
    ("0", "3.93029623689475152850687446709813398", "-5.94103387213150473470249202589458001",
     "2.490627285651252793"),
    ("0", "-12.411077166933676983734381540685453484102414134010752",
     "30.3381886302823215981729903691836576", "-16.54810288924490272"),
    ("0", "37.50931341651103919496903965334519631242339792120440212",
     "-88.1789048947664011014276693541209817", "47.37952196281928122"),
    ("0", "-27.896526289197287805948263144598643896",
     "65.09189467479367152629021928716553658", "-34.87065786149660974"),
    ("0", "1.5", "-4", "2.5"),
)


def _exact(x):
    return tuple(_exact(v) for v in x) if isinstance(x, tuple) else Fraction(x)


# ---- ... plus one registry entry (per kernel: on the state, on the rotation group)
_TABLEAU = methods.Tableau(_exact(TSIT5_A), _exact(TSIT5_B), _exact(TSIT5_C))
_PAIR = methods.Embedded("standard", 4, _exact(TSIT5_E), _exact(TSIT5_P))
_BOTH = {"kinematics": "erk", "rigid body": "erk", "ode": "erk"}
TSIT5 = methods.Method("tsit5", "Tsitouras 5(4) with error control and dense output",
                       "Runge-Kutta", 5, _BOTH, "Tsitouras 2011", tableau=_TABLEAU,
                       embedded=_PAIR)
RKMK_TSIT5 = methods.Method("rkmk_tsit5", "Runge-Kutta-Munthe-Kaas with the Tsitouras 5(4) pair",
                            "Munthe-Kaas", 5, {"kinematics": "rkmk", "rigid body": "rkmk",
                                                   "ode": "rkmk"},
                            "Tsitouras 2011; Munthe-Kaas 1999", tableau=_TABLEAU, embedded=_PAIR)
NEW = (TSIT5, RKMK_TSIT5)
CASES = [(m.name, kind) for m in NEW for kind in methods.MODELS]


@pytest.fixture
def registered():
    for m in NEW:
        methods.register(m)
    try:
        yield
    finally:
        for m in NEW:
            methods.unregister(m.name)


# ---- order conditions from the rooted trees ---------------------------------------------

@functools.lru_cache
def _trees(n):
    """The rooted trees of order n, each the sorted tuple of its subtrees (a leaf is ())."""
    if n == 1:
        return ((),)
    out = set()
    for parts in _partitions(n - 1, n - 1):
        for children in itertools.product(*(_trees(p) for p in parts)):
            out.add(tuple(sorted(children, key=repr)))
    return tuple(sorted(out, key=repr))


def _partitions(n, most):
    if n == 0:
        yield ()
        return
    for k in range(min(n, most), 0, -1):
        for rest in _partitions(n - k, k):
            yield (k,) + rest


def _order(tree):
    return 1 + sum(_order(t) for t in tree)


def _gamma(tree):
    return _order(tree) * math.prod(_gamma(t) for t in tree)


def _phi(tree, A):
    """The stage vector of the elementary weight of `tree` (before the weights b)."""
    out = [Fraction(1)] * len(A)
    for child in tree:
        inner = _phi(child, A)
        out = [o * sum((A[i][j] * inner[j] for j in range(len(A))), Fraction(0))
               for i, o in enumerate(out)]
    return out


def _defects(b, A, order):
    """|sum b Phi(t) - 1/gamma(t)| over the trees of order <= `order`."""
    return [abs(sum(x * y for x, y in zip(b, _phi(t, A), strict=True)) - Fraction(1, _gamma(t)))
            for n in range(1, order + 1) for t in _trees(n)]


def _extended(method):
    """(b, bhat, A) over the stages and the FSAL stage (its row of a is b)."""
    t, e = method.tableau, method.embedded
    s = t.stages
    A = [[t.a[i][j] if j < i else Fraction(0) for j in range(s + 1)] for i in range(s)]
    A.append(list(t.b) + [Fraction(0)])
    b = list(t.b) + [Fraction(0)]
    return b, [x + y for x, y in zip(b, e.e, strict=True)], A


def test_the_trees_are_counted_right():
    assert [len(_trees(n)) for n in range(1, 7)] == [1, 1, 2, 4, 9, 20]


@pytest.mark.parametrize("name, order, estimate, tol", [
    ("tsit5", 5, 4, Fraction(1, 10**70)), ("bs3", 3, 2, 0)])
def test_the_pairs_meet_their_order_conditions(name, order, estimate, tol):
    """All the trees up to the order of the step (17 for order 5) and of the estimate."""
    m = TSIT5 if name == "tsit5" else methods.get(name)
    b, bhat, A = _extended(m)
    assert max(_defects(b, A, order)) <= tol
    assert max(_defects(bhat, A, estimate)) <= tol
    assert max(_defects(b, A, order + 1)) > Fraction(1, 10**6)    # and not one order more
    assert max(_defects(bhat, A, estimate + 1)) > Fraction(1, 10**6)
    # the dense output passes through the step's end (theta = 1: the weights b, 0 on FSAL)
    ends = [sum(row, Fraction(0)) for row in m.embedded.dense]
    assert max(abs(x - y) for x, y in zip(ends, b, strict=True)) <= Fraction(1, 10**15)


# ---- what one entry gives ----------------------------------------------------------------

def test_one_entry_makes_a_method_of_both_models_on_the_state_and_on_the_group(registered):
    for m in NEW:
        assert methods.get(m.name) is m
        assert m.models == methods.MODELS and m.adaptive and m.order == 5
        assert m.pair_kind == methods.PairKind.STANDARD
    assert not TSIT5.group and RKMK_TSIT5.group                    # |q| kept on the group
    assert "tsit5" in methods.names("kinematics") and "rkmk_tsit5" in methods.names("rigid body")
    assert methods.sizes(TSIT5) == {"stages": 7, "nodes": 0, "powers": 4}
    top = rotode.RigidBody([1.0, 2.0, 3.0])
    res = rotode.integrate(top, (0, 5), [1.0, 0, 0, 0, 1.0, -2.0, 3.0], method="rkmk_tsit5",
                           rtol=1e-8, atol=1e-10)
    assert res.success
    assert np.abs(np.linalg.norm(res.q, axis=-1) - 1).max() < 1e-15
    res = rotode.integrate(top, (0, 5), [1.0, 0, 0, 0, 1.0, -2.0, 3.0], method="tsit5",
                           rtol=1e-8, atol=1e-10)
    assert res.success and 1e-12 < np.abs(np.linalg.norm(res.q, axis=-1) - 1).max() < 1e-6


W = rotode.omega.Sinusoid(amplitude=np.pi / 2, rate=2 * np.pi / 10,
                          phase=[0, 2 * np.pi / 3, 4 * np.pi / 3])     # Rucker 2018 benchmark
# an asymmetric top under a tilted gravity: nonlinear in q and w together
TOP = rotode.RigidBody([1.0, 2.0, 3.0], torque=rotode.torque.Gravity(1.0, 1.0, [0.3, 0.1, 1.0]))
Y_TOP = np.array([0.9238795325112867, 0.3826834323650898, 0.0, 0.0, 1.0, -2.0, 3.0])


@functools.lru_cache
def _reference(kind):
    if kind == "kinematics":
        return rotode.integrate(W, (0, 10), [1.0, 0, 0, 0], method="magnus8", dt=1e-3).q[-1]
    return rotode.integrate(TOP, (0, 3), Y_TOP, method="dop853", dt=3 / 6000).q[-1]


def _error(kind, method, **step):
    if kind == "kinematics":
        q = rotode.integrate(W, (0, 10), [1.0, 0, 0, 0], method=method, **step).q[-1]
    else:
        q = rotode.integrate(TOP, (0, 3), Y_TOP, method=method, **step).q[-1]
    ref = _reference(kind)
    q = q / np.linalg.norm(q)
    return np.linalg.norm(q * np.sign(q @ ref) - ref / np.linalg.norm(ref))


def _slope(kind, method, ns):
    span = 10.0 if kind == "kinematics" else 3.0
    errs = [_error(kind, method, dt=span / n) for n in ns]
    return -np.polyfit(np.log(ns), np.log(errs), 1)[0], errs


@pytest.mark.parametrize("method, order, ns", [
    ("tsit5", 5, [60, 120, 240, 480]), ("rkmk_tsit5", 5, [60, 120, 240, 480]),
    ("bs3", 3, [100, 200, 400, 800]), ("rkmk3", 3, [100, 200, 400, 800])])
def test_fixed_steps_converge_at_the_order(registered, method, order, ns):
    """The error against the step size, a log-log fit: the order within 0.2 on the top (a
    nonlinear problem).  On the linear kinematic equation q' = q w(t)/2 the state pairs show
    up to one order more (as DOPRI5 does, tests/test_adaptive.py), the group ones their own."""
    slope, errs = _slope("rigid body", method, ns)
    assert abs(slope - order) < 0.2, (slope, errs)
    slope, errs = _slope("kinematics", method, ns)
    assert order - 0.2 < slope < order + 1.2, (slope, errs)


@pytest.mark.parametrize("method", ["tsit5", "rkmk_tsit5", "bs3", "rkmk3"])
@pytest.mark.parametrize("kind", methods.MODELS)
def test_adaptive_runs_keep_tolerance_proportionality(registered, method, kind):
    """One decade of error per decade of rtol (0.7-1.3, as the other pairs), adaptively."""
    rtols = 10.0 ** -np.arange(4, 11, 1.0)
    errs = [_error(kind, method, rtol=r, atol=r * 1e-2) for r in rtols]
    slope = np.polyfit(np.log10(rtols), np.log10(errs), 1)[0]
    assert slope == pytest.approx(1.0, abs=0.3), (slope, errs)
    assert errs[-1] < 1e-7


@pytest.mark.parametrize("name, kind", CASES)
def test_the_dense_output_serves_t_eval_without_shortening_steps(registered, name, kind):
    model, y0 = (W, [1.0, 0, 0, 0]) if kind == "kinematics" else (TOP, Y_TOP)
    ts = np.linspace(0, 3, 31)
    plain = rotode.integrate(model, (0, 3), y0, method=name, rtol=1e-10, atol=1e-12)
    dense = rotode.integrate(model, (0, 3), y0, method=name, rtol=1e-10, atol=1e-12, t_eval=ts)
    assert dense.stats["n_steps"] == plain.stats["n_steps"]
    np.testing.assert_array_equal(dense.y[-1], plain.y[-1])
    fine = rotode.integrate(model, (0, 3), y0, method="dop853", rtol=1e-13, atol=1e-15,
                            t_eval=ts)
    assert np.abs(dense.y - fine.y).max() < 1e-8


# ---- the contract suite on the new entries ------------------------------------------------

_CONTRACT = [
    contract.test_batch_equals_single_runs_for_any_thread_count,
    contract.test_read_only_and_strided_inputs_are_accepted_and_not_written,
    contract.test_results_do_not_depend_on_call_history,
    functools.partial(contract.test_an_exception_in_user_code_surfaces_in_the_caller,
                      workers=1),
    functools.partial(contract.test_an_exception_in_user_code_surfaces_in_the_caller,
                      workers=2),
    contract.test_bad_input_gets_a_clear_exception,
    contract.test_a_non_finite_state_fails_the_run_with_a_message,
]


def test_the_contract_list_is_the_contract_suite():
    """Every per-method test of tests/test_contract.py is run on the new entries below."""
    per_method = {name for name, f in vars(contract).items() if name.startswith("test_")
                  and callable(f) and any(m.name == "parametrize" and "name, kind" in m.args[0]
                                          for m in getattr(f, "pytestmark", []))}
    covered = {getattr(f, "func", f).__name__ for f in _CONTRACT}
    assert per_method == covered


@pytest.mark.filterwarnings("ignore:`workers`=4 is more than")
@pytest.mark.parametrize("check", _CONTRACT,
                         ids=lambda f: getattr(f, "func", f).__name__[5:] + (
                             f"-workers{f.keywords['workers']}" if hasattr(f, "keywords")
                             else ""))
@pytest.mark.parametrize("name, kind", CASES)
def test_the_new_pair_keeps_the_contract(registered, check, name, kind):
    check(name, kind)


# ---- BS3: SciPy's RK23 in compiled code ---------------------------------------------------

def test_bs3_is_scipys_rk23():
    """The registry's exact BS3 coefficients are SciPy's RK23, in doubles."""
    rk = scipy.integrate.RK23
    m = methods.get("bs3")
    a, b, c = m.tableau.doubles
    np.testing.assert_array_equal([list(r) + [0.0] * (3 - len(r)) for r in a], rk.A)
    np.testing.assert_array_equal(b, rk.B)
    np.testing.assert_array_equal(c, rk.C)
    np.testing.assert_array_equal(m.embedded.doubles["e"], rk.E)
    np.testing.assert_array_equal(m.embedded.doubles["dense"], rk.P)
    assert m.embedded.error_order == rk.error_estimator_order
    assert rotode.ivp.COMPILED_METHODS["RK23"] == "bs3"


KIN = rotode.QuaternionKinematics(W)
GRAVITY_TOP = rotode.RigidBody([1, 1, 0.5], torque=rotode.torque.Gravity(1.0, 1.0, [0, 0, 1]))


@pytest.mark.parametrize("tolerances, close", [({}, 1e-12),
                                               ({"rtol": 1e-5, "atol": 1e-8}, 1e-10)])
@pytest.mark.parametrize("case", ["kinematics", "top"])
def test_solve_ivp_rk23_takes_scipys_steps(case, tolerances, close):
    """rotode.solve_ivp(method="RK23") on a rotode model runs the compiled bs3 pair: SciPy's
    steps (the same number, the same evaluations; the times and states to 1e-12 at SciPy's
    default tolerances, about 50 steps here) and its dense output.  The error norm is SciPy's
    up to the order of its roundings (rotode/erk.pxd ``erk_error_norm`` multiplies by |h|
    last, as for RK45 and DOP853), so step sizes differ in the last bits and the times drift
    apart by ~1e-16 per step: 6e-12 after the ~250 steps at rtol 1e-5."""
    fun, y0 = (KIN, [1.0, 0, 0, 0]) if case == "kinematics" else (GRAVITY_TOP,
                                                                  [1.0, 0, 0, 0, 1.5, 0, 1])
    ours = rotode.solve_ivp(fun, (0, 10), y0, method="RK23", dense_output=True, **tolerances)
    ref = scipy.integrate.solve_ivp(fun, (0, 10), y0, method="RK23", dense_output=True,
                                    **tolerances)
    assert ours.success and ours.message == ref.message
    assert ours.t.shape == ref.t.shape and ours.nfev == ref.nfev
    assert np.abs(ours.t - ref.t).max() < close
    assert np.abs(ours.y - ref.y).max() < close
    ts = np.linspace(0, 10, 101)
    assert np.abs(ours.sol(ts) - ref.sol(ts)).max() < close
    t_eval = np.linspace(0, 10, 7)
    ours = rotode.solve_ivp(fun, (0, 10), y0, method="RK23", t_eval=t_eval, **tolerances)
    ref = scipy.integrate.solve_ivp(fun, (0, 10), y0, method="RK23", t_eval=t_eval,
                                    **tolerances)
    np.testing.assert_array_equal(ours.t, t_eval)
    assert np.abs(ours.y - ref.y).max() < close


# ---- too many stages ---------------------------------------------------------------------

def _too_big():
    """Tsitouras' pair with 10 more (empty) stages than the compiled pair holds (16, with the
    FSAL stage)."""
    s = TSIT5.tableau.stages + 10
    zero = Fraction(0)
    a = TSIT5.tableau.a + tuple((zero,) * i for i in range(TSIT5.tableau.stages, s))
    tab = methods.Tableau(a, TSIT5.tableau.b + (zero,) * 10, TSIT5.tableau.c + (zero,) * 10)
    pair = methods.Embedded("standard", 4, TSIT5.embedded.e[:-1] + (zero,) * 10
                            + TSIT5.embedded.e[-1:],
                            TSIT5.embedded.dense[:-1] + ((zero,) * 4,) * 10
                            + TSIT5.embedded.dense[-1:])
    return tab, pair


def test_an_entry_with_too_many_stages_raises_when_made():
    tab, pair = _too_big()
    for kernels in ({"kinematics": "erk"}, {"rigid body": "rkmk"}):
        with pytest.raises(ValueError, match=r"needs 17 stages in the .* kernel '(erk|rkmk)', "
                                             r"which holds at most 16"):
            methods.Method("tsit5_padded", "too many stages", "Runge-Kutta", 5, kernels,
                           "test", tableau=tab, embedded=pair)
    assert "tsit5_padded" not in methods.REGISTRY


def test_a_registry_entry_with_too_many_stages_raises_at_import():
    """rotode/methods.py with such an entry among its own fails to import (ValueError)."""
    source = Path(methods.__file__).read_text()
    # the entry made of that module's own classes from the padded pair's exact numbers
    entry = ('    Method("tsit5_padded", "too many stages", "Runge-Kutta", 5, '
             '{_KIN: "erk", _RB: "erk"}, "test", tableau=Tableau(*_TOO_BIG[:3]), '
             'embedded=Embedded("standard", 4, *_TOO_BIG[3:])),\n')
    assert source.count("_ENTRIES = (\n") == 1
    patched = re.sub(r"_ENTRIES = \(\n", lambda _: "_ENTRIES = (\n" + entry, source)
    tab, pair = _too_big()
    namespace = {"__name__": "rotode.methods_patched",
                 "_TOO_BIG": (tab.a, tab.b, tab.c, pair.e, pair.dense)}
    with pytest.raises(ValueError, match="'tsit5_padded' needs 17 stages"):
        exec(compile(patched, "rotode/methods.py (patched)", "exec"), namespace)
    # the same module as it is imports
    exec(compile(source, "rotode/methods.py", "exec"), {"__name__": "rotode.methods_copy"})
