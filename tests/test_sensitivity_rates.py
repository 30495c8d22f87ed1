"""Sensitivities of kinematics to the parameters of their angular velocity (issue 30):
a constant rate ``"omega"``, the ``"bias"`` and ``"scale"`` of a gyroscope recording
(`rotode.omega.Samples`), and the ``"amplitude"``, ``"rate"`` and ``"phase"`` of
`rotode.omega.Sinusoid`.

References: the closed form d dtheta(T)/d w = T J_r(w T) of a constant rate (the right
Jacobian of SO(3); Sola, Deray and Atchuthan 2018, eq. 143); the bias Jacobian of on-manifold
preintegration (Forster, Carlone, Dellaert and Scaramuzza, IEEE T-RO 33(1), 2017, eq. 44 and
appendix A), written here independently with SciPy's `Rotation`; central differences of
fixed-step runs for every method the registry lists.
"""
import pickle

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import rotode
from rotode import methods, omega

RATE_PARAMS = ("omega", "bias", "scale", "amplitude", "rate", "phase")
SIZES = {"rate": 1}


def hat(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def right_jacobian(phi):
    """J_r(phi) = I - (1 - cos a)/a^2 [phi]x + (a - sin a)/a^3 [phi]x^2 (closed form)."""
    a = np.linalg.norm(phi)
    K = hat(phi)
    return np.eye(3) - (1 - np.cos(a)) / a**2 * K + (a - np.sin(a)) / a**3 * K @ K


def rate_methods(param):
    return [m for m in methods.names("kinematics")
            if methods.get(m).sensitivity("kinematics", param)]


def unit(q):
    return q / np.linalg.norm(q)


def rotvec_between(qa, qb):
    """theta with qb = qa exp(theta/2) (body-frame right difference)."""
    ra = Rotation.from_quat(qa, scalar_first=True)
    rb = Rotation.from_quat(qb, scalar_first=True)
    return (ra.inv() * rb).as_rotvec()


def test_registry_lists_the_lie_group_exponential_kernels():
    for p in RATE_PARAMS:
        assert set(rate_methods(p)) == {"lie_euler", "exp2", "cg1", "cg2", "cg3"}
    assert not methods.get("rk4").sensitivity("kinematics", "bias")
    assert methods.get("rk4").sensitivity("kinematics")            # y0 still


@pytest.mark.parametrize("method", ["lie_euler", "exp2", "cg1", "cg2", "cg3"])
@pytest.mark.parametrize("frame", ["body", "world"])
def test_constant_rate_closed_form(method, frame):
    """d dtheta(T) / d w = T J_r(w T) (body frame), R(q0)^T T J_r(w T) (world frame), at
    every output time, to 1e-13."""
    w = np.array([0.7, -1.1, 0.4])
    q0 = unit(np.array([0.8, 0.1, -0.3, 0.5]))
    res = rotode.integrate(w, (0.0, 3.0), q0, method=method, dt=0.01, frame=frame,
                           save_every=50, sensitivity=["y0", "omega"])
    S = res.sensitivity["omega"]
    assert S.shape == (res.t.shape[0], 3, 3)
    R0 = Rotation.from_quat(q0, scalar_first=True).as_matrix()
    for t, Si in zip(res.t[1:], S[1:], strict=True):
        want = t * right_jacobian(w * t)
        if frame == "world":
            want = R0.T @ want
        np.testing.assert_allclose(Si, want, rtol=0, atol=1e-13 * max(1.0, t))
    np.testing.assert_array_equal(S[0], 0.0)


def test_constant_rates_per_body_batch_equals_single_runs():
    rng = np.random.default_rng(3)
    W = rng.normal(size=(5, 3))
    Q0 = rng.normal(size=(5, 4))
    res = rotode.integrate(W, (0.0, 2.0), Q0, method="cg2", dt=0.05, frame="world",
                           sensitivity=["omega"])
    for i in range(5):
        one = rotode.integrate(W[i], (0.0, 2.0), Q0[i], method="cg2", dt=0.05,
                               frame="world", sensitivity=["omega"])
        np.testing.assert_array_equal(res.sensitivity["omega"][i], one.sensitivity["omega"])


def _forster(t, w_meas, b, s):
    """d theta(T)/d b and d theta(T)/d s of the product of exp((s (w_k - b)) dt_k) by
    Forster et al. 2017 eq. 44: -sum_k dR_(k+1, n)^T J_r^k dt_k (bias), and the same with
    diag(w_k - b) (scale)."""
    n = len(t) - 1
    dt = np.diff(t)
    phis = (s * (w_meas[:n] - b)) * dt[:, None]
    Db = np.zeros((3, 3))
    Ds = np.zeros((3, 3))
    after = Rotation.identity()                  # dR_(k+1, n)
    for k in range(n - 1, -1, -1):
        A = after.as_matrix().T @ right_jacobian(phis[k]) * dt[k]
        Db -= A @ np.diag(s)
        Ds += A @ np.diag(w_meas[k] - b)
        after = Rotation.from_rotvec(phis[k]) * after
    return Db, Ds


@pytest.mark.parametrize("method", ["lie_euler", "exp2"])
def test_bias_and_scale_match_forster_preintegration(method):
    """Piecewise-constant gyro samples, steps on the samples: the bias (and scale) Jacobian of
    on-manifold preintegration, to 1e-12."""
    rng = np.random.default_rng(7)
    t = np.cumsum(np.r_[0.0, rng.uniform(0.004, 0.006, 400)])
    w_meas = rng.normal(scale=0.8, size=(t.size, 3)) + [0.3, -0.2, 0.5]
    b = np.array([0.02, -0.01, 0.03])
    s = np.array([1.001, 0.998, 1.0005])
    gyro = omega.Samples(t, w_meas, kind="previous", bias=b, scale=s)
    q0 = unit(np.array([0.9, -0.2, 0.3, 0.1]))
    res = rotode.integrate(gyro, (t[0], t[-1]), q0, method=method, dt="samples",
                           sensitivity=["bias", "scale"])
    Db, Ds = _forster(t, w_meas, b, s)
    np.testing.assert_allclose(res.sensitivity["bias"][-1], Db, rtol=0,
                               atol=1e-12 * np.abs(Db).max())
    np.testing.assert_allclose(res.sensitivity["scale"][-1], Ds, rtol=0,
                               atol=1e-12 * np.abs(Ds).max())


def _central(run, p, eps):
    """Central differences of the final orientation of run(p) in body-frame tangent
    coordinates (3, n_p)."""
    n = SIZES.get(p, 3)
    base = run(np.zeros(n))
    cols = []
    for j in range(n):
        e = np.zeros(n)
        e[j] = eps
        cols.append((rotvec_between(base, run(e)) - rotvec_between(base, run(-e))) / (2 * eps))
    return np.column_stack(cols)


def _recording(kind):
    rng = np.random.default_rng(11)
    t = np.linspace(0.0, 2.0, 41)
    w = np.column_stack([np.sin(2 * t), 0.5 * np.cos(3 * t), 0.2 + 0.1 * t]) \
        + 0.05 * rng.normal(size=(41, 3))
    return t, w


KINDS = {"omega": ("constant",), "bias": ("linear", "cubic", "previous"),
         "scale": ("linear", "cubic", "previous"), "amplitude": ("sinusoid",),
         "rate": ("sinusoid",), "phase": ("sinusoid",)}
CASES = [(m, p, k, f) for p in RATE_PARAMS for m in rate_methods(p) for k in KINDS[p]
         for f in ("body", "world")]
SINE = {"amplitude": np.array([0.8, -0.5, 1.1]), "rate": 1.7,
        "phase": np.array([0.2, 1.0, -0.6])}


@pytest.mark.parametrize("method,param,kind,frame", CASES)
def test_against_central_differences_of_fixed_step_runs(method, param, kind, frame):
    """Every method x rate parameter the registry lists, both frames: the derivative of the
    computed solution equals central differences of runs on the same grid to 1e-7."""
    q0 = unit(np.array([0.6, 0.3, -0.5, 0.4]))
    b0 = np.array([0.05, -0.02, 0.01])
    s0 = np.array([1.01, 0.99, 1.02])
    w0 = np.array([0.4, -0.9, 1.3])
    if param == "omega":
        def model(d):
            return w0 + d
        span, dt = (0.0, 2.0), 0.037
    elif kind == "sinusoid":
        def model(d):
            p = dict(SINE)
            p[param] = p[param] + (d[0] if param == "rate" else d)
            return omega.Sinusoid(p["amplitude"], p["rate"], p["phase"])
        span, dt = (0.3, 2.5), 0.041
    else:
        t, w = _recording(kind)

        def model(d):
            return omega.Samples(t, w, kind=kind, bias=b0 + (d if param == "bias" else 0),
                                 scale=s0 + (d if param == "scale" else 0))
        span, dt = (0.1, 1.9), 0.037

    def run(d):
        return rotode.integrate(model(d), span, q0, method=method, dt=dt, frame=frame).y[-1]

    res = rotode.integrate(model(np.zeros(SIZES.get(param, 3))), span, q0, method=method,
                           dt=dt, frame=frame, sensitivity=[param])
    S = res.sensitivity[param][-1]
    fd = _central(run, param, 1e-6)
    np.testing.assert_allclose(S, fd, rtol=0, atol=1e-7 * max(1.0, np.abs(fd).max()))


def test_the_issue_example_runs():
    t = np.linspace(0.0, 1.0, 201)
    w_meas = np.column_stack([np.sin(t), np.cos(t), 0.1 + 0 * t])
    gyro = rotode.omega.Samples(t, w_meas, kind="previous", bias=[0.01, 0.0, -0.02])
    res = rotode.integrate(gyro, (t[0], t[-1]), [1.0, 0, 0, 0], method="exp2", dt="samples",
                           sensitivity=["bias"])
    assert res.sensitivity["bias"].shape == (t.size, 3, 3)
    assert np.isfinite(res.sensitivity["bias"]).all()


def test_samples_bias_and_scale_are_the_corrected_interpolant():
    t, w = _recording("linear")
    b = np.array([0.1, -0.2, 0.05])
    s = np.array([1.1, 0.9, 2.0])
    for kind in ("linear", "cubic", "previous"):
        raw = omega.Samples(t, w, kind=kind)
        cor = omega.Samples(t, w, kind=kind, bias=b, scale=s)
        for tt in (0.0, 0.33, 1.0, 1.999, 2.0):
            np.testing.assert_allclose(cor(tt), s * (raw(tt) - b), rtol=1e-14, atol=1e-14)
        np.testing.assert_array_equal(cor.bias, b)
        np.testing.assert_array_equal(cor.scale, s)
        back = pickle.loads(pickle.dumps(cor))
        np.testing.assert_array_equal(back(0.77), cor(0.77))
    np.testing.assert_array_equal(omega.Samples(t, w, scale=2.0).scale, [2.0, 2.0, 2.0])


@pytest.mark.parametrize("kw,msg", [({"bias": [1.0, 2.0]}, "bias"),
                                    ({"scale": np.ones((2, 3))}, "scale"),
                                    ({"bias": [np.nan, 0, 0]}, "bias")])
def test_samples_bad_bias_or_scale(kw, msg):
    t, w = _recording("linear")
    with pytest.raises(ValueError, match=msg):
        omega.Samples(t, w, **kw)


def test_bad_requests_name_what_is_valid():
    t, w = _recording("linear")
    gyro = omega.Samples(t, w)
    with pytest.raises(ValueError, match=r"'omega'.*\('y0', 'bias', 'scale'\)"):
        rotode.integrate(gyro, (0, 1), [1.0, 0, 0, 0], method="exp2", dt=0.01,
                         sensitivity=["omega"])
    with pytest.raises(ValueError, match=r"'bias'.*\('y0', 'omega'\)"):
        rotode.integrate([0.0, 0, 1], (0, 1), [1.0, 0, 0, 0], method="exp2", dt=0.01,
                         sensitivity=["bias"])
    with pytest.raises(ValueError, match=r"rk4.*'bias'.*lie_euler"):
        rotode.integrate(gyro, (0, 1), [1.0, 0, 0, 0], method="rk4", dt=0.01,
                         sensitivity=["bias"])
    with pytest.raises(ValueError, match=r"'bias'.*\('y0', 'amplitude', 'rate', 'phase'\)"):
        rotode.integrate(omega.Sinusoid(1.0, 2.0), (0, 1), [1.0, 0, 0, 0], method="exp2",
                         dt=0.01, sensitivity=["bias"])
    with pytest.raises(ValueError, match=r"'bias'.*\('y0',\)"):
        rotode.integrate(lambda t: np.array([1.0, 0, 0]), (0, 1), [1.0, 0, 0, 0],
                         method="exp2", dt=0.01, sensitivity=["bias"])
