"""Sensitivities of ab3, rkn4 and the implicit rules of a rigid body (issue 30): the
derivative of the computed solution, steps held fixed.

References independent of rotode/_tangent.pyx: central differences of fixed-step runs (every
output row, a non-uniform grid for ab3's variable-step weights, rkn4 on [q, q'], sub-stepped
implicit steps, the implicit options), the closed form of a spin about a principal axis (the
midpoint rule steps it exactly: v = h w), the symmetry of an axisymmetric top about its axis and the
conservation of |L_b| by the torque-free implicit steps (both exact for the discrete map).
"""
import numpy as np
import pytest
from scipy.linalg import expm
from test_sensitivity import INERTIA, Q0, TOP, W0, _hat, _perturbed, _tangent

import rotode

IMPLICIT = ("implicit_midpoint", "trapezoid", "object_trapezoid")


def _fd_rows(run, y0, eps=1e-6):
    """Central differences of every row of run(y0) in tangent coordinates: (m, 6, 6)."""
    ref = run(y0)
    cols = []
    for j in range(6):
        plus, minus = run(_perturbed(y0, j, eps)), run(_perturbed(y0, j, -eps))
        cols.append([(_tangent(p, r) - _tangent(m, r)) / (2 * eps)
                     for p, m, r in zip(plus, minus, ref, strict=True)])
    return np.transpose(np.array(cols), (1, 2, 0))


@pytest.mark.parametrize("normalize", [False, True])
def test_ab3_on_a_non_uniform_grid_every_row(normalize):
    """t_eval refines the grid: ab3's variable-step weights, and its rk3 start, at every
    output row against central differences of fixed-step runs (1e-7)."""
    y0 = np.r_[Q0, W0]
    kw = dict(method="ab3", dt=0.1, t_eval=[0.0, 0.33, 0.71, 1.23, 1.5], normalize=normalize)

    def run(y):
        return rotode.integrate(TOP, (0, 1.5), y, **kw).y

    S = rotode.integrate(TOP, (0, 1.5), y0, sensitivity=["y0"], **kw).sensitivity["y0"]
    want = _fd_rows(run, y0)
    np.testing.assert_allclose(S[0], np.eye(6), atol=1e-15)
    np.testing.assert_allclose(S, want, rtol=0, atol=1e-7 * np.abs(want).max())


@pytest.mark.parametrize("method", IMPLICIT)
@pytest.mark.parametrize("options", [{"dt": 0.05}, {"dt": 0.5}, {"dt": 0.5, "bound": "inertia"},
                                     {"dt": 0.3, "substep_angle": 0.0},
                                     {"dt": 0.2, "solver": "fixed-point"}])
def test_implicit_every_row_and_sub_step(method, options):
    """Long steps are sub-stepped (the run's bounds, functions of L_b, differentiated too);
    every row against central differences of fixed-step runs (measured ~5e-10; 1e-7)."""
    y0 = np.r_[Q0, W0]

    def run(y):
        return rotode.integrate(TOP, (0, 1.5), y, method=method, **options).y

    res = rotode.integrate(TOP, (0, 1.5), y0, method=method, sensitivity=["y0"], **options)
    if options["dt"] == 0.5:
        assert res.stats["n_substeps"] > 3              # (sub-steps inside the steps)
    want = _fd_rows(run, y0)
    np.testing.assert_allclose(res.sensitivity["y0"], want, rtol=0,
                               atol=1e-7 * np.abs(want).max())


def test_implicit_torque_that_depends_on_w():
    """A damping torque: the explicit midpoint kick of rotode/implicit.pyx on duals."""
    body = rotode.RigidBody(INERTIA, torque=rotode.torque.Callable(lambda t, q, w: -0.3 * w))
    y0 = np.r_[Q0, W0]

    def run(y):
        return rotode.integrate(body, (0, 1.0), y, method="implicit_midpoint", dt=0.1).y

    S = rotode.integrate(body, (0, 1.0), y0, method="implicit_midpoint", dt=0.1,
                         sensitivity=["y0"]).sensitivity["y0"]
    want = _fd_rows(run, y0)
    np.testing.assert_allclose(S, want, rtol=0, atol=1e-7 * np.abs(want).max())


@pytest.mark.parametrize("dt", [0.05, 0.7])
def test_implicit_midpoint_spin_closed_form(dt):
    """A spin about a principal axis: the midpoint root is v = h w exactly (R(-v/2) l = l), so
    q_n = q0 exp(t_n w/2) and d dtheta(T)/d dtheta0 = exp(-[w]x T), dw/dtheta0 = 0; the
    inertia moves neither (L_b = I w0, v = h A L_b = h w0)."""
    w, T = np.array([0.0, 0.0, 1.3]), 2.1
    body = rotode.RigidBody(INERTIA)
    res = rotode.integrate(body, (0, T), np.r_[Q0, w], method="implicit_midpoint", dt=dt,
                           sensitivity=["y0", "inertia"])
    phi = res.sensitivity["y0"][-1]
    np.testing.assert_allclose(phi[:3, :3], expm(-_hat(w) * T), atol=1e-13)
    np.testing.assert_allclose(phi[3:, :3], 0.0, atol=1e-13)
    np.testing.assert_allclose(res.sensitivity["inertia"][-1], 0.0, atol=1e-12)


@pytest.mark.parametrize("method", IMPLICIT)
def test_implicit_axisymmetric_top_symmetry_and_invariant(method):
    """A torque-free axisymmetric top, I = diag(a, a, c): every implicit step commutes with the
    rotation g of the body about e3, (q g, g^-1 L_b) -> (q_n g, g^-1 L_n), so the direction
    [dtheta0, dw0] = [e3, -e3 x w0] is carried to [e3, -e3 x w_n] exactly; and the steps keep
    |L_b| (L_b <- R(-v) L_b), so (I w_n)^T I dw_n/dy0 = [0, (I w0)^T I]."""
    inertia = np.array([1.4, 1.4, 2.1])
    w0 = np.array([0.7, -0.4, 1.9])
    e3 = np.array([0.0, 0.0, 1.0])
    res = rotode.integrate(rotode.RigidBody(inertia), (0, 3.0), np.r_[Q0, w0], method=method,
                           dt=0.25, sensitivity=["y0"])
    phi = res.sensitivity["y0"]
    wn = res.y[:, 4:]
    carried = phi @ np.r_[e3, -np.cross(e3, w0)]
    want = np.concatenate([np.broadcast_to(e3, wn.shape), -np.cross(e3, wn)], axis=1)
    np.testing.assert_allclose(carried, want, atol=1e-12)
    grad = np.einsum("mi,mij->mj", wn * inertia ** 2, phi[:, 3:, :])
    np.testing.assert_allclose(grad, np.broadcast_to(np.r_[0, 0, 0, w0 * inertia ** 2],
                                                     grad.shape), atol=1e-12)


def test_implicit_solver_tolerance_bounds_the_agreement():
    """The derivative is that of the exact root; the computed root is off it by what the
    iteration leaves, and central differences of the computed solution follow the iteration.
    Newton (quadratic, its stop predicted) leaves round-off even at tol 1e-6 (measured 2e-9);
    the fixed-point map (linear) at tol 1e-6 leaves about tol (measured 4.5e-7 relative)."""
    y0 = np.r_[Q0, W0]
    for solver, tol, lo, hi in (("newton", 1e-6, 0.0, 1e-8), ("fixed-point", 1e-6, 1e-8, 1e-5),
                                ("fixed-point", 1e-12, 0.0, 1e-8)):
        kw = dict(method="implicit_midpoint", dt=0.1, solver=solver, tol=tol)

        def run(y, kw=kw):
            return rotode.integrate(TOP, (0, 1.0), y, **kw).y

        S = rotode.integrate(TOP, (0, 1.0), y0, sensitivity=["y0"], **kw).sensitivity["y0"]
        want = _fd_rows(run, y0)
        err = np.abs(S - want).max() / np.abs(want).max()
        assert lo <= err <= hi, (solver, tol, err)


@pytest.mark.parametrize("method, dt", [("implicit_midpoint", 0.5), ("trapezoid", 0.5),
                                        ("ab3", 0.1), ("rkn4", 0.1)])
def test_backward_in_time(method, dt):
    """A run from t = 1.5 back to 0 (negative steps and sub-steps), every row to 1e-7."""
    y0 = np.r_[Q0, W0]

    def run(y):
        return rotode.integrate(TOP, (1.5, 0), y, method=method, dt=dt).y

    S = rotode.integrate(TOP, (1.5, 0), y0, method=method, dt=dt,
                         sensitivity=["y0"]).sensitivity["y0"]
    want = _fd_rows(run, y0)
    np.testing.assert_allclose(S, want, rtol=0, atol=1e-7 * np.abs(want).max())


@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("param", ["y0", "inertia", "com"])
def test_rkn4_every_row(normalize, param):
    """rkn4 steps [q, q'] (its rows [q, 2 vec(conj(q) q') / |q|^2]); every row against central
    differences of fixed-step runs to 1e-7, with and without ``normalize`` (q' = 1/2 q w kept)."""
    y0 = np.r_[Q0, W0]
    kw = dict(method="rkn4", dt=0.05, normalize=normalize)
    com = np.array([0.02, -0.01, 0.3])

    def run(y=y0, moments=INERTIA, c=com):
        body = rotode.RigidBody(moments, torque=rotode.torque.Gravity(1.0, 9.81, c))
        return rotode.integrate(body, (0, 1.5), y, **kw).y

    S = rotode.integrate(TOP, (0, 1.5), y0, sensitivity=[param], **kw).sensitivity[param]
    if param == "y0":
        want = _fd_rows(run, y0)
    else:
        ref, eps, cols = run(), 1e-6, []
        for j in range(3):
            e = np.eye(3)[j] * eps
            if param == "inertia":
                plus, minus = run(moments=INERTIA + e), run(moments=INERTIA - e)
            else:
                plus, minus = run(c=com + e), run(c=com - e)
            cols.append([(_tangent(p, r) - _tangent(m, r)) / (2 * eps)
                         for p, m, r in zip(plus, minus, ref, strict=True)])
        want = np.transpose(np.array(cols), (1, 2, 0))
    np.testing.assert_allclose(S, want, rtol=0, atol=1e-7 * np.abs(want).max())


def test_a_method_without_it_names_itself():
    """A rate parameter of kinematics stepped by rkmk5 (not a product of exponentials of
    rotation vectors linear in the rate) is not differentiated: ValueError naming the method
    and those that are.  (A user's equations stepped by rkmk5, refused here before, are
    differentiated now: tests/test_ode_sensitivity_rkmk.py.)"""
    with pytest.raises(ValueError, match="method 'rkmk5' does not support the sensitivity to "
                                         "'omega' for kinematics; the methods that do are"):
        rotode.integrate(np.array([0.1, 0.2, 0.3]), (0, 1), [1.0, 0, 0, 0], method="rkmk5",
                         rtol=1e-6, sensitivity=["omega"])


@pytest.mark.parametrize("method", IMPLICIT)
@pytest.mark.parametrize("bound", ["euclidean", "inertia"])
def test_implicit_inertia_through_the_sub_step_bounds(method, bound):
    """A full inertia tensor and steps long enough to be sub-stepped: the bounds move with I
    too (through A = I^-1 and lambda_min, d lambda = e^T dI e); the six tensor components
    against central differences of runs (symmetric perturbations) to 1e-7."""
    tensor = np.array([[1.2, 0.1, -0.05], [0.1, 1.7, 0.08], [-0.05, 0.08, 2.3]])
    y0 = np.r_[Q0, W0]
    kw = dict(method=method, dt=0.5, bound=bound)

    def run(inertia):
        return rotode.integrate(rotode.RigidBody(inertia, torque=TOP.torque), (0, 1.5), y0,
                                **kw)

    res = rotode.integrate(rotode.RigidBody(tensor, torque=TOP.torque), (0, 1.5), y0,
                           sensitivity=["inertia"], **kw)
    assert res.stats["n_substeps"] > 3
    ref, eps, cols = run(tensor).y[-1], 1e-6, []
    for a, b in ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)):
        E = np.zeros((3, 3))
        E[a, b] = E[b, a] = eps
        cols.append((_tangent(run(tensor + E).y[-1], ref)
                     - _tangent(run(tensor - E).y[-1], ref)) / (2 * eps))
    want = np.array(cols).T
    np.testing.assert_allclose(res.sensitivity["inertia"][-1], want, rtol=0,
                               atol=1e-7 * np.abs(want).max())
