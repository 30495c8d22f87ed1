"""Sensitivities against closed forms and the filter they feed (issue 30).

- The torque-free axisymmetric top, I = diag(I1, I1, I3): its exact motion is
  ``w(t) = Rz(lam t) w0`` with ``lam = (I3 - I1) / I1 w3`` and
  ``q(t) = exp(t L / (2 I1)) q0 exp(-lam t e3 / 2)`` (L = R0 I w0, the constant world angular
  momentum: a precession about L at |L| / I1 composed with a body spin at -lam; Landau and
  Lifshitz, Mechanics, sec. 33; Goldstein, Classical Mechanics, 3rd ed., sec. 5.6).  Its
  state-transition matrix in rotode's tangent coordinates (right perturbation
  ``q exp(dtheta/2)``, body frame; then dw) is the derivative of that closed form, taken here
  by central differences in 40-digit arithmetic (mpmath): exact to far below 1e-20.
- `rotode.propagate_covariance` against a Monte Carlo of 10^4 perturbed runs (the
  multiplicative EKF's prediction step, Markley 2003): within sampling error.
"""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import rotode

mpmath = pytest.importorskip("mpmath")
mp = mpmath.mp

I1, I3 = 1.3, 2.1
Q0 = np.array([0.9, 0.1, -0.3, 0.2])
Q0 = Q0 / np.linalg.norm(Q0)
W0 = np.array([0.7, -0.4, 1.9])
T = 3.0


def _qmul(p, q):
    return [p[0] * q[0] - p[1] * q[1] - p[2] * q[2] - p[3] * q[3],
            p[0] * q[1] + p[1] * q[0] + p[2] * q[3] - p[3] * q[2],
            p[0] * q[2] - p[1] * q[3] + p[2] * q[0] + p[3] * q[1],
            p[0] * q[3] + p[1] * q[2] - p[2] * q[1] + p[3] * q[0]]


def _qexp(v):
    """The unit quaternion exp((0, v) / 2) of the rotation vector v (mpmath)."""
    a = mpmath.sqrt(v[0] ** 2 + v[1] ** 2 + v[2] ** 2)
    if a == 0:
        return [mp.mpf(1), mp.mpf(0), mp.mpf(0), mp.mpf(0)]
    s = mpmath.sin(a / 2) / a
    return [mpmath.cos(a / 2), s * v[0], s * v[1], s * v[2]]


def _rotate(q, v):
    return _qmul(_qmul(q, [0, *v]), [q[0], -q[1], -q[2], -q[3]])[1:]


def _exact(q0, w0, t):
    """The closed-form state (q, w) of the axisymmetric top at t (mpmath)."""
    lam = (I3 - I1) / I1 * w0[2]
    c, s = mpmath.cos(lam * t), mpmath.sin(lam * t)
    w = [c * w0[0] - s * w0[1], s * w0[0] + c * w0[1], w0[2]]
    L = _rotate(q0, [I1 * w0[0], I1 * w0[1], I3 * w0[2]])
    q = _qmul(_qmul(_qexp([t * x / I1 for x in L]), q0), _qexp([0, 0, -lam * t]))
    return q, w


def _tangent(q_ref, q, w_ref, w):
    """[dtheta, dw] of (q, w) near (q_ref, w_ref): q = q_ref exp(dtheta/2) to first order."""
    d = _qmul([q_ref[0], -q_ref[1], -q_ref[2], -q_ref[3]], q)
    return [2 * x for x in d[1:]] + [a - b for a, b in zip(w, w_ref, strict=True)]


def exact_stm(t):
    """The 6x6 d[dtheta, dw](t) / d[dtheta0, dw0] of the closed form (mpmath, 40 digits)."""
    with mp.workdps(40):
        q0 = [mp.mpf(float(x)) for x in Q0]
        w0 = [mp.mpf(float(x)) for x in W0]
        qr, wr = _exact(q0, w0, t)
        h = mp.mpf("1e-15")
        cols = []
        for j in range(6):
            rows = []
            for sign in (1, -1):
                e = [mp.mpf(0)] * 6
                e[j] = sign * h
                q = _qmul(q0, _qexp(e[:3]))
                w = [a + b for a, b in zip(w0, e[3:], strict=True)]
                qt, wt = _exact(q, w, t)
                rows.append(_tangent(qr, qt, wr, wt))
            cols.append([(a - b) / (2 * h) for a, b in zip(*rows, strict=True)])
        return np.array([[float(cols[j][i]) for j in range(6)] for i in range(6)])


@pytest.fixture(scope="module")
def stm():
    return exact_stm(T)


def test_the_closed_form_is_the_motion():
    # (a check of the reference itself: rotode's own run at rtol 1e-12)
    top = rotode.RigidBody([I1, I1, I3])
    res = rotode.integrate(top, (0, T), np.r_[Q0, W0], method="dop853", rtol=1e-12,
                           atol=1e-14)
    with mp.workdps(30):
        q, w = _exact([mp.mpf(float(x)) for x in Q0], [mp.mpf(float(x)) for x in W0], T)
    np.testing.assert_allclose(res.y[-1], np.array([float(x) for x in q + w]), atol=1e-10)


@pytest.mark.parametrize("method", ["dop853", "dopri5"])
def test_the_axisymmetric_tops_state_transition_matrix(stm, method):
    top = rotode.RigidBody([I1, I1, I3])
    res = rotode.integrate(top, (0, T), np.r_[Q0, W0], method=method, rtol=1e-12, atol=1e-14,
                           sensitivity=["y0"])
    phi = res.sensitivity["y0"][-1]
    assert np.abs(phi - stm).max() < 1e-10 * max(1.0, np.abs(stm).max()), np.abs(phi - stm).max()
    np.testing.assert_allclose(res.sensitivity["y0"][0], np.eye(6), atol=1e-15)


def test_propagate_covariance_is_the_monte_carlo_covariance():
    """P(T) = Phi P0 Phi^T against the sample covariance of 10^4 runs from y0 perturbed by
    N(0, P0) in tangent coordinates: each entry within 5 standard errors of the sample
    covariance (small P0: the linearisation's own error is far below that)."""
    rng = np.random.default_rng(7)
    top = rotode.RigidBody([I1, I1, I3])
    sig = np.array([2e-3, 1e-3, 3e-3, 1e-3, 2e-3, 5e-4])
    P0 = np.diag(sig ** 2)
    P0[0, 4] = P0[4, 0] = 0.5 * sig[0] * sig[4]          # (a correlated pair)
    res = rotode.integrate(top, (0, T), np.r_[Q0, W0], method="dop853", rtol=1e-11,
                           atol=1e-13, sensitivity=["y0"])
    P = rotode.propagate_covariance(res, P0)[-1]
    n = 10_000
    dx = rng.multivariate_normal(np.zeros(6), P0, size=n)
    Y0 = np.empty((n, 7))
    r0 = Rotation.from_quat(Q0, scalar_first=True)
    Y0[:, :4] = (r0 * Rotation.from_rotvec(dx[:, :3])).as_quat(scalar_first=True)
    Y0[:, 4:] = W0 + dx[:, 3:]
    runs = rotode.integrate(top, (0, T), Y0, method="dop853", rtol=1e-11, atol=1e-13,
                            workers=2)
    qT = Rotation.from_quat(res.y[-1, :4], scalar_first=True)
    err = np.empty((n, 6))
    err[:, :3] = (qT.inv() * Rotation.from_quat(runs.y[:, -1, :4], scalar_first=True)).as_rotvec()
    err[:, 3:] = runs.y[:, -1, 4:] - res.y[-1, 4:]
    S = np.cov(err, rowvar=False)
    # the standard error of a sample covariance entry: sqrt((P_ii P_jj + P_ij^2) / n)
    se = np.sqrt((np.outer(np.diag(P), np.diag(P)) + P ** 2) / n)
    assert (np.abs(S - P) < 5 * se).all(), np.abs(S - P) / se
    assert np.abs(np.linalg.eigvalsh(P)).min() > 0


def test_the_inertia_identification_example():
    """examples/inertia_identification.py: least_squares with rotode's Jacobian reaches the
    answer of finite-difference Jacobians, and the truth within 4 sigma of the fit."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "inertia_identification.py"
    if not path.exists():
        pytest.skip("examples/ not in this checkout")
    spec = importlib.util.spec_from_file_location("rotode_example_inertia", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    exact, fd, truth, sigma = example.main()
    assert exact.success and fd.success
    assert np.abs(exact.x - fd.x).max() < 1e-2 * sigma.min()
    assert np.abs((exact.x - truth) / sigma).max() < 4.0
